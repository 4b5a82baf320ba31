-- B2 at top level (twin of b2_top.ds), with top-level locals as a Lua programmer writes them.
-- Usage: lua5.4 b2_top.lua [N]   (default 100000000)
local n = math.tointeger(tonumber(arg[1])) or 100000000
local total = 0
for i = 0, n - 1 do
  total = (total + i * i) % 1000003
end
print(total)
