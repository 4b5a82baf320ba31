-- B4 twin of b4_collatz.ds: total Collatz steps for n in 1..1,000,000 inclusive:
-- 131434424.
-- Usage: lua5.4 b4_collatz.lua [N]   (default 1000000)

local function collatz_total(limit)
  local total = 0
  for n = 1, limit do
    local m = n
    while m ~= 1 do
      if m % 2 == 0 then
        m = m // 2
      else
        m = 3 * m + 1
      end
      total = total + 1
    end
  end
  return total
end

local n = math.tointeger(tonumber(arg[1])) or 1000000
print(collatz_total(n))
