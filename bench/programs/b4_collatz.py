"""B4 twin of b4_collatz.ds: total Collatz steps for n in 1..1,000,000 inclusive:
131434424.

Usage: python3 b4_collatz.py [N]   (default 1000000)
"""
import sys


def collatz_total(limit):
    total = 0
    for n in range(1, limit + 1):
        m = n
        while m != 1:
            if m % 2 == 0:
                m //= 2
            else:
                m = 3 * m + 1
            total += 1
    return total


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    print(collatz_total(n))


if __name__ == "__main__":
    main()
