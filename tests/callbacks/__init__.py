"""Tests of the package this folder mirrors."""
