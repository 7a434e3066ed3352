// A local chain for trying Trellis payments by hand: anvil on 127.0.0.1 with chain id 84532, the test USDC
// (contracts/TestUSDC.sol) at the Base Sepolia USDC address and Multicall3 at its usual address. Runs until Ctrl-C.
//
//   npx bun scripts/chain.ts [--port 8545] [--buyers 2] [--fund 0xADDRESS=AMOUNT_USDC ...] [--verbose]
//
// It prints the variables that point a Trellis server at it (settling itself, with anvil's dev account 0 as relayer)
// and, with --buyers N, the private keys of N fresh wallets holding 100 test USDC each (they need no ETH).
import { getAddress, parseUnits } from 'viem'
import { startChain } from '../dev/chain.ts'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/chain.ts [--port N] [--buyers N] [--fund 0xADDRESS=AMOUNT_USDC]... [--verbose]')

const args = process.argv.slice(2)
let port = 0
let buyers = 0
let verbose = false
const funds: Array<[`0x${string}`, bigint]> = []
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!
  const value = () => args[++i] ?? usage(`${arg} needs a value`)
  if (arg === '--port') port = Number(value())
  else if (arg === '--buyers') buyers = Number(value())
  else if (arg === '--verbose') verbose = true
  else if (arg === '--fund') {
    const [address, amount] = value().split('=')
    try {
      funds.push([getAddress(address!), parseUnits(amount ?? '100', 6)])
    } catch {
      usage(`bad --fund ${address}=${amount}`)
    }
  } else if (arg === '--help' || arg === '-h') usage()
  else usage(`unknown argument ${arg}`)
}
if (!Number.isInteger(port) || port < 0 || port > 65535) usage('bad --port')
if (!Number.isInteger(buyers) || buyers < 0 || buyers > 100) usage('bad --buyers')

// Stopped by a signal, or when the process that started this one is gone: `npx bun scripts/chain.ts` is npm, a shell
// and then this process, and npm passes SIGTERM to the shell only, so a TERM to npx reaches no handler here.
let stopping = false
const starting = startChain({ port, verbose })
const shutdown = async () => {
  if (stopping) return
  stopping = true
  await (await starting.catch(() => null))?.stop()
  process.exit(0)
}
process.on('SIGINT', shutdown)
process.on('SIGTERM', shutdown)
process.on('SIGHUP', shutdown)
// Also what keeps this process alive until then.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) void shutdown() // orphaned: adopted by init (or a subreaper)
}, 250)

const chain = await starting
for (const [address, amount] of funds) await chain.fundBuyer(address, amount)
const wallets = []
for (let i = 0; i < buyers; i++) wallets.push(await chain.newFundedBuyer(parseUnits('100', 6)))

console.log(`anvil: ${chain.rpcUrl} (chain id ${chain.chainId}), USDC ${chain.usdc}, Multicall3 ${chain.multicall3}`)
console.log('\n# point a Trellis server at this chain:')
for (const [key, value] of Object.entries(chain.env)) console.log(`export ${key}=${value}`)
console.log('\n# or start one on it, in another terminal:')
console.log(
  `${Object.entries(chain.env)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')} npm start`,
)
if (funds.length) console.log(`\n# funded: ${funds.map(([a, n]) => `${a} (${Number(n) / 1e6} USDC)`).join(', ')}`)
if (wallets.length) {
  console.log('\n# buyers (100 USDC each):')
  for (const w of wallets) console.log(`${w.address} ${w.privateKey}`)
}
console.log('\nCtrl-C to stop.')
