"""The 1-D convection problem u_t + beta u_x = 0 on x in [0, X_MAX], t in [0, 1]: its domain.

Shared by the collocation data (`optiforge.datamodules.convection`) and the PINN (its periodic
boundary u(0, t) = u(X_MAX, t)), so it lives below both.
"""

from __future__ import annotations

import math

X_MAX = 2 * math.pi
