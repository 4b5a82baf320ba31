-- B1 twin of b1_fib.ds: recursive Fibonacci, fib(32) = 2178309.
-- Usage: lua5.4 b1_fib.lua [N]   (default 32)

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local n = math.tointeger(tonumber(arg[1])) or 32
print(fib(n))
