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
