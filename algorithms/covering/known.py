"""Best known (for small n proven) optimal covering radii of the unit square [0, 1]^2 and of the
unit disk, the targets the benchmark measures against.

Square: n = 1 sqrt(2)/2 and n = 2 sqrt(5)/4 (halves of the square), n = 3 sqrt(65)/16 and
n = 4 sqrt(2)/4 (Heppes-Melissen 1997), n = 5 0.326160 (the smaller root of a degree-12
polynomial, Heppes-Melissen), n = 6..10 Nurmela-Ostergard 2000 best found coverings (conjectured
optimal; table values as quoted in our reference notes, not re-read from the report).
Disk (Zahn 1962, Kershner; as tabulated for the disk covering problem): n = 1, 2 radius 1,
n = 3 sqrt(3)/2, n = 4 sqrt(2)/2, n = 5 0.609382, n = 6 0.555905, n = 7 1/2.
"""

from __future__ import annotations

import math

SQUARE = {
    1: math.sqrt(2) / 2,
    2: math.sqrt(5) / 4,
    3: math.sqrt(65) / 16,
    4: math.sqrt(2) / 4,
    5: 0.326160,
    6: 0.298727,
    7: 0.274292,
    8: 0.260300,
    9: 0.230636,
    10: 0.218233,
}
DISK = {1: 1.0, 2: 1.0, 3: math.sqrt(3) / 2, 4: math.sqrt(2) / 2, 5: 0.609382, 6: 0.555905, 7: 0.5}
KNOWN_RADII = {"square": SQUARE, "disk": DISK}
