"""B2 at top level (twin of b2_top.ds): module globals, as a script is first written.

Usage: python3 b2_top.py [N]   (default 100000000)
"""
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
total = 0
for i in range(n):
    total = (total + i * i) % 1000003
print(total)
