// An RPC outage is not a mismatch: with the chain unreadable the ledger check warns "could not check", sets
// trellis_ledger_unreadable (not trellis_ledger_problems), and verify-ledger exits 3; a real mismatch still logs an
// error, counts a problem and exits 1. A real server on a real chain behind a fault-injecting RPC proxy.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { startRpcProxy, type RpcProxy } from './helpers/rpc-proxy.ts'
import { verifyLedger, waitFor } from './helpers/ledger.ts'

const PRICE = 10_000n

let chain: TestChain
let rpc: RpcProxy
let server: TestServer
let env: Record<string, string>

beforeAll(async () => {
  chain = await startChain()
  rpc = await startRpcProxy(chain.rpcUrl)
  // The check runs once at start (on an empty ledger), then not before the restarts below.
  env = { ...chain.env, TRELLIS_RPC_URL: rpc.url, TRELLIS_LEDGER_CHECK_S: '86400' }
  server = await startTestServer(env)
})
afterAll(async () => {
  await server?.dispose()
  await rpc?.stop()
  await chain?.stop()
})

async function buy(): Promise<string> {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const entry = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('checked'),
    is_free: false,
    price: { amount: String(PRICE) },
  })
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const reply = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE })) },
  })
  expect(reply.status).toBe(200)
  return JSON.parse(Buffer.from(reply.headers.get('x-payment-response')!, 'base64').toString()).transaction
}

/** The ledger gauges once the check has run (null before). */
async function ledgerGauges(): Promise<{ problems: number; unreadable: number } | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text()
  const value = (name: string) =>
    text
      .split('\n')
      .find((line) => line.startsWith(`${name} `))
      ?.split(' ')[1]
  const problems = value('trellis_ledger_problems')
  return problems === undefined ? null : { problems: Number(problems), unreadable: Number(value('trellis_ledger_unreadable')) }
}
const logLines = () =>
  server.logs.map((line) => {
    try {
      return JSON.parse(line)
    } catch {
      return {}
    }
  })

let hashes: string[] = []

test('RPC down: the check warns "could not check", problems 0, unreadable 1; verify-ledger exits 3, mid-way too', async () => {
  hashes = [await buy(), await buy()]
  rpc.down()
  await server.restart({ ...env, TRELLIS_LEDGER_CHECK_S: '1' })
  await waitFor('a ledger check', async () => (await ledgerGauges()) !== null)
  expect(await ledgerGauges()).toEqual({ problems: 0, unreadable: 1 })
  const warned = logLines().find((line) => line.msg?.includes('could not check'))
  expect(warned).toMatchObject({ level: 'warn', msg: 'could not check the ledger against the chain: the RPC is not readable' })
  expect(logLines().filter((line) => line.msg === 'the ledger does not match the chain')).toEqual([])

  const down = await verifyLedger(server.dataDir, { ...chain.env, TRELLIS_RPC_URL: rpc.url })
  expect(down.code).toBe(3)
  expect(down.report).toMatchObject({ ok: false, problems: [], unreadable: { cause: expect.any(String), subjects: expect.any(Array) } })
  expect(down.stderr).toContain('could not check the ledger')

  // Up again, but the second receipt fails: one row proven, then the chain cannot be read.
  rpc.up()
  rpc.fail('eth_getTransactionReceipt', { times: 1_000, when: (params) => params[0] === hashes[1] })
  const midway = await verifyLedger(server.dataDir, { ...chain.env, TRELLIS_RPC_URL: rpc.url })
  expect(midway.code).toBe(3)
  expect(midway.report).toMatchObject({ proven: 1, problems: [], unreadable: { subjects: [expect.any(String)] } })
  rpc.heal()

  // Back: the next run checks the rows it could not, and finds them sound.
  await waitFor('a clean check', async () => JSON.stringify(await ledgerGauges()) === JSON.stringify({ problems: 0, unreadable: 0 }))
  const up = await verifyLedger(server.dataDir, { ...chain.env, TRELLIS_RPC_URL: rpc.url })
  expect({ code: up.code, problems: up.report.problems, unreadable: up.report.unreadable, proven: up.report.proven }).toEqual({
    code: 0,
    problems: [],
    unreadable: null,
    proven: 2,
  })
}, 90_000)

test('a real mismatch still reads as one: error log, problems 1, unreadable 0, verify-ledger exits 1', async () => {
  await server.stop()
  // The first row's authorization nonce no longer matches its on-chain transfer; the check starts over.
  await withRecords(server, async (db) => {
    await db.run('UPDATE payments SET nonce = ? WHERE transaction_hash = ?', [`0x${'7'.padStart(64, '0')}`, hashes[0]!])
    await db.run(`UPDATE meta SET value = '' WHERE key = 'ledger_proven_through'`)
  })
  const { code, report } = await verifyLedger(server.dataDir, { ...chain.env, TRELLIS_RPC_URL: rpc.url })
  expect(code).toBe(1)
  expect(report).toMatchObject({
    ok: false,
    unreadable: null,
    problems: [{ problem: 'ledger row not matched by its on-chain transfer', subjects: [expect.any(String)] }],
  })

  await server.restart({ ...env, TRELLIS_LEDGER_CHECK_S: '1' })
  await waitFor('a ledger check', async () => (await ledgerGauges()) !== null)
  expect(await ledgerGauges()).toEqual({ problems: 1, unreadable: 0 })
  await waitFor('the error line', async () => logLines().some((line) => line.msg === 'the ledger does not match the chain'))
  expect(logLines().find((line) => line.msg === 'the ledger does not match the chain').level).toBe('error')
})
