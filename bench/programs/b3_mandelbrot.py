"""B3 twin of b3_mandelbrot.ds: Mandelbrot escape counts on a W x H grid over
[-2, 1] x [-1, 1], at most MAX_ITER iterations per point, summed: 13428357 for 600 x 400
and 200 iterations.

Usage: python3 b3_mandelbrot.py [W H MAX_ITER]   (default 600 400 200)
"""
import sys


def mandelbrot(w, h, max_iter):
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
    return total


def main():
    w, h, max_iter = (int(a) for a in sys.argv[1:4]) if len(sys.argv) > 3 else (600, 400, 200)
    print(mandelbrot(w, h, max_iter))


if __name__ == "__main__":
    main()
