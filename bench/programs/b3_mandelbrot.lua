-- B3 twin of b3_mandelbrot.ds: Mandelbrot escape counts on a W x H grid over
-- [-2, 1] x [-1, 1], at most MAX_ITER iterations per point, summed: 13428357 for
-- 600 x 400 and 200 iterations.
-- Usage: lua5.4 b3_mandelbrot.lua [W H MAX_ITER]   (default 600 400 200)

local function mandelbrot(w, h, max_iter)
  local total = 0
  for py = 0, h - 1 do
    local cy = -1.0 + 2.0 * py / h
    for px = 0, w - 1 do
      local cx = -2.0 + 3.0 * px / w
      local zx, zy = 0.0, 0.0
      local it = 0
      while it < max_iter and zx * zx + zy * zy <= 4.0 do
        zx, zy = zx * zx - zy * zy + cx, 2.0 * zx * zy + cy
        it = it + 1
      end
      total = total + it
    end
  end
  return total
end

local w = math.tointeger(tonumber(arg[1])) or 600
local h = math.tointeger(tonumber(arg[2])) or 400
local max_iter = math.tointeger(tonumber(arg[3])) or 200
print(mandelbrot(w, h, max_iter))
