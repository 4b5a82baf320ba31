-- B3 at top level (twin of b3_top.ds), with top-level locals.
-- Usage: lua5.4 b3_top.lua [W H MAX_ITER]   (default 600 400 200)
local w = math.tointeger(tonumber(arg[1])) or 600
local h = math.tointeger(tonumber(arg[2])) or 400
local max_iter = math.tointeger(tonumber(arg[3])) or 200
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
print(total)
