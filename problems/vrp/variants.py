"""The 16 VRP variants: capacity (C) combined with any subset of four attributes.

O  open routes: a vehicle does not return to the depot, the return leg costs nothing.
B  backhauls: some customers deliver goods to the depot (pickups); by default strict, i.e. in
   every route all linehaul customers come before any backhaul customer; per instance also
   mixed or MVMoE's signed load rule (`VRPBatch.mixed_backhaul`, `VRPBatch.signed_load`).
L  route length limit: the length of every route (including the return leg unless open) is
   at most the instance's distance limit.
TW time windows: service at customer i starts within [early_i, late_i] (waiting allowed),
   takes service_time_i, travel time = distance (speed 1); the vehicle must be back at the depot
   by the depot's late time (open routes: no return deadline).

Names follow MVMoE / RouteFinder: "O" prefix, then "VRP", then B, L, TW in that order; plain
capacity is "CVRP". 6 variants are seen in training, the other 10 only at test time (zero-shot).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variant:
    """Which attributes a VRP variant switches on (capacity is always on)."""

    open_route: bool = False
    backhaul: bool = False
    distance_limit: bool = False
    time_windows: bool = False

    @property
    def name(self) -> str:
        core = "VRP" + "B" * self.backhaul + "L" * self.distance_limit + "TW" * self.time_windows
        if self.open_route:
            return "O" + core
        return "CVRP" if core == "VRP" else core


ALL_VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(open_route=o, backhaul=b, distance_limit=limit, time_windows=tw)
        for o in (False, True)
        for b in (False, True)
        for limit in (False, True)
        for tw in (False, True)
    )
}
SEEN_VARIANTS: tuple[str, ...] = ("CVRP", "OVRP", "VRPB", "VRPL", "VRPTW", "OVRPTW")
UNSEEN_VARIANTS: tuple[str, ...] = tuple(name for name in ALL_VARIANTS if name not in SEEN_VARIANTS)


def variant(name: str) -> Variant:
    """The variant called `name`; an unknown name raises, listing all 16."""
    if name not in ALL_VARIANTS:
        raise ValueError(f"variant must be one of {sorted(ALL_VARIANTS)}, got {name!r}")
    return ALL_VARIANTS[name]
