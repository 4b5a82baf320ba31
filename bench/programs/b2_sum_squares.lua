-- B2 twin of b2_sum_squares.ds: sum = (sum + i*i) % 1000003 for i in 0..100,000,000
-- (exclusive), which gives 954980.
-- Usage: lua5.4 b2_sum_squares.lua [N]   (default 100000000)

local function sum_squares(n)
  local sum = 0
  for i = 0, n - 1 do
    sum = (sum + i * i) % 1000003
  end
  return sum
end

local n = math.tointeger(tonumber(arg[1])) or 100000000
print(sum_squares(n))
