"""B1 twin of b1_fib.ds: recursive Fibonacci, fib(32) = 2178309.

Usage: python3 b1_fib.py [N]   (default 32)
"""
import sys


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    print(fib(n))


if __name__ == "__main__":
    main()
