"""B3 at top level (twin of b3_top.ds): module globals.

Usage: python3 b3_top.py [W H MAX_ITER]   (default 600 400 200)
"""
import sys

w = int(sys.argv[1]) if len(sys.argv) > 1 else 600
h = int(sys.argv[2]) if len(sys.argv) > 2 else 400
max_iter = int(sys.argv[3]) if len(sys.argv) > 3 else 200
total = 0
for py in range(h):
    cy = -1.0 + 2.0 * py / h
    for px in range(w):
        cx = -2.0 + 3.0 * px / w
        zx = zy = 0.0
        it = 0
        while it < max_iter and zx * zx + zy * zy <= 4.0:
            zx, zy = zx * zx - zy * zy + cx, 2.0 * zx * zy + cy
            it += 1
        total += it
print(total)
