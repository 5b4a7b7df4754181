-- tests/corpus/bench.lua - a small CPU benchmark in plain Lua (5.3 and
-- 5.4), the workload of the corpus's interpreters: Debian's lua sources
-- ship none.  Mostly bytecode (calls, arithmetic, tables, closures, string
-- building), so that the interpreter's dispatch loop is where the time goes,
-- as it is in real Lua programs.  Usage: lua bench.lua [ROUNDS]; prints one
-- checksum line (the same on every run).

local rounds = tonumber(arg and arg[1]) or 1

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function sieve(n)
  local composite, count = {}, 0
  for i = 2, n do
    if not composite[i] then
      count = count + 1
      for j = i * i, n, i do composite[j] = true end
    end
  end
  return count
end

-- Mandelbrot set membership on a small grid (floating point).
local function mandel(size)
  local inside = 0
  for y = 0, size - 1 do
    local ci = 2.0 * y / size - 1.0
    for x = 0, size - 1 do
      local cr, zr, zi, k = 2.5 * x / size - 2.0, 0.0, 0.0, 0
      while k < 50 and zr * zr + zi * zi < 4.0 do
        zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
        k = k + 1
      end
      if k == 50 then inside = inside + 1 end
    end
  end
  return inside
end

-- Objects as tables with methods, and closures.
local Account = {}
Account.__index = Account
function Account.new(balance) return setmetatable({ balance = balance, ops = 0 }, Account) end
function Account:deposit(v) self.balance = self.balance + v; self.ops = self.ops + 1 end
function Account:withdraw(v)
  if v <= self.balance then self.balance = self.balance - v end
  self.ops = self.ops + 1
end

local function accounts(n)
  local list, total = {}, 0
  for i = 1, 64 do list[i] = Account.new(i * 10) end
  for i = 1, n do
    local a = list[i % 64 + 1]
    if i % 3 == 0 then a:withdraw(i % 17) else a:deposit(i % 13) end
  end
  for _, a in ipairs(list) do total = total + a.balance + a.ops end
  return total
end

local function counter()
  local c = 0
  return function(d) c = c + d; return c end
end

local function strings(n)
  local parts = {}
  for i = 1, n do parts[#parts + 1] = tostring(i % 97) end
  local s = table.concat(parts, ",")
  local sum = 0
  for w in s:gmatch("%d+") do sum = sum + tonumber(w) end
  return sum
end

local check = 0
for r = 1, rounds do
  local inc = counter()
  check = check + fib(24) + sieve(20000) + mandel(70) + accounts(150000) + strings(20000)
  for i = 1, 100000 do inc(i % 7) end
  check = check + inc(0)
end
print(string.format("bench.lua: %d rounds, checksum %d", rounds, check))
