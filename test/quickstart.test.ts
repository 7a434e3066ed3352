// The README's testnet quickstart, run as written: scripts/chain.ts (a local chain and a buyer key), a server on it,
// scripts/publish.ts (a creator publishes a paid entry) and scripts/buy.ts (@x402/fetch buys it): a real purchase.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { waitForLine } from '../dev/lines.ts'
import { call } from '../dev/api.ts'

const ROOT = join(import.meta.dir, '..')
let chain: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let server: TestServer | undefined
afterAll(async () => {
  await server?.dispose()
  chain?.kill('SIGTERM')
  await chain?.exited
})

async function script(args: string[]): Promise<{ code: number; out: string }> {
  const run = Bun.spawn([process.execPath, ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  return { code, out: out + err }
}

let quickstartBuyerKey = ''

test('chain.ts, a server on it, publish.ts and buy.ts complete a real paid purchase', async () => {
  chain = Bun.spawn([process.execPath, 'scripts/chain.ts', '--buyers', '1'], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
  const printed: string[] = []
  await waitForLine(chain.stdout, (line) => (printed.push(line), line.startsWith('Ctrl-C') ? line : undefined), {
    timeoutMs: 60_000,
    what: 'scripts/chain.ts',
  })
  // The one-line server command it prints, and the buyer's key.
  const startLine = printed.find((line) => line.endsWith(' npm start'))!
  const env = Object.fromEntries(
    startLine
      .replace(/ npm start$/, '')
      .split(' ')
      .map((pair) => pair.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
  expect(Object.keys(env)).toEqual(expect.arrayContaining(['TRELLIS_RPC_URL', 'TRELLIS_SETTLEMENT', 'TRELLIS_RELAYER_KEY']))
  const buyerKey = printed[printed.findIndex((line) => line.startsWith('# buyers')) + 1]!.split(' ')[1]!
  expect(buyerKey).toMatch(/^0x[0-9a-f]{64}$/)
  quickstartBuyerKey = buyerKey

  server = await startTestServer(env)
  const published = await script(['scripts/publish.ts', '--url', server.url, '--price', '25000'])
  expect(published.code).toBe(0)
  const entryUrl = published.out.split('\n').find((line) => line.startsWith(`${server!.url}/v1/feeds/`))!
  expect(published.out).toContain(`npx bun scripts/buy.ts ${entryUrl} --key <BUYER_KEY>`)

  const bought = await script(['scripts/buy.ts', entryUrl, '--key', buyerKey])
  expect(bought.code).toBe(0)
  expect(bought.out).toMatch(/paid: transaction 0x[0-9a-f]{64} on eip155:84532/)
  expect(bought.out).toContain('content: A paid note')
  const entryId = entryUrl.split('/').pop()
  const ledger = await call(server.url, 'GET', `/v1/transactions?entry_id=${entryId}`)
  expect(ledger.body.transactions).toHaveLength(1)
  expect(ledger.body.transactions[0].amount).toBe('25000')
}, 120_000)

test('the README’s pass example: publish.ts --pass, buy.ts buys the pass, buy.ts --sign-in reads with no payment', async () => {
  expect(server).toBeDefined() // the chain and the server of the test above
  const buyerKey = quickstartBuyerKey
  const published = await script(['scripts/publish.ts', '--url', server!.url, '--price', '10000', '--pass'])
  expect(published.code).toBe(0)
  const lines = published.out.split('\n')
  const passUrl = lines.find((line) => line.endsWith('/pass/purchases --key <BUYER_KEY>'))!.split(' ')[3]!
  const entryUrl = lines.find((line) => line.endsWith(' --key <BUYER_KEY> --sign-in'))!.split(' ')[3]!
  expect(published.out).toContain('50000 (0.05 USDC) for 30 days')

  const bought = await script(['scripts/buy.ts', passUrl, '--key', buyerKey])
  expect(bought.out).toMatch(/paid: transaction 0x[0-9a-f]{64} on eip155:84532/)
  expect(bought.out).toMatch(/pass [0-9a-f-]{36} to feed [0-9a-f-]{36}, runs until \d{4}-/)
  const read = await script(['scripts/buy.ts', entryUrl, '--key', buyerKey, '--sign-in'])
  expect(read.out).toContain('nothing paid')
  expect(read.out).toContain('content: A paid note')
  expect(read.code).toBe(0)
  const feedId = new URL(passUrl).pathname.split('/')[3]
  const ledger = (await call(server!.url, 'GET', `/v1/transactions?feed_id=${feedId}`)).body.transactions
  expect(ledger.map((t: { kind: string; amount: string }) => [t.kind, t.amount])).toEqual([['pass', '50000']])
}, 120_000)
