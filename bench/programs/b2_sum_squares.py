"""B2 twin of b2_sum_squares.ds: sum = (sum + i*i) % 1000003 for i in range(100_000_000),
which gives 954980.

Usage: python3 b2_sum_squares.py [N]   (default 100000000)
"""
import sys


def sum_squares(n):
    total = 0
    for i in range(n):
        total = (total + i * i) % 1000003
    return total


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000_000
    print(sum_squares(n))


if __name__ == "__main__":
    main()
