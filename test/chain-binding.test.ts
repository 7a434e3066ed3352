// A data directory is tied to its chain: network, chain id and token are recorded at the first start, and a later
// start (or verify-ledger) with other settings is refused in one line naming both, unless TRELLIS_ALLOW_CHAIN_CHANGE=1
// rebinds it (with a warning). Directories made before the record adopt the settings of their first start after the
// upgrade. Real server processes on real data directories.
import { afterAll, expect, test } from 'bun:test'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { withRecords } from '../dev/records-sql.ts'
import { shownPostgresUrl } from '../src/store/postgres/url.ts'

// No chain is needed to start: the RPC is a closed port, reached by no start-up step.
const SEPOLIA = { TRELLIS_RPC_URL: 'http://127.0.0.1:9' }
const MAINNET = { ...SEPOLIA, TRELLIS_NETWORK: 'base', TRELLIS_SETTLEMENT: 'local', TRELLIS_RELAYER_KEY: `0x${'11'.repeat(32)}` }
const OTHER_TOKEN = { ...SEPOLIA, TRELLIS_USDC_ADDRESS: '0x1111111111111111111111111111111111111111' }

const servers: TestServer[] = []
afterAll(async () => {
  for (const server of servers) await server.dispose()
})

/** The records as the server names them: its data directory, or its PostgreSQL database (without a password). */
const recordsNamed = (server: TestServer) =>
  server.recordsEnv.TRELLIS_DATABASE_URL
    ? `the database ${shownPostgresUrl(server.recordsEnv.TRELLIS_DATABASE_URL)}`
    : `the data directory ${server.dataDir}`
const refusal = (server: TestServer, env: Record<string, string>) =>
  server.restart(env).then(
    () => 'started',
    (error: Error) => error.message,
  )
const recorded = async (server: TestServer) =>
  JSON.parse(
    (await withRecords(server, (db) => db.get<{ value: string }>(`SELECT value FROM meta WHERE key = 'chain_binding'`), {
      readonly: true,
    }))!.value,
  )

test('a base-sepolia data directory refuses a start on base, and on another token; verify-ledger too', async () => {
  const server = await startTestServer(SEPOLIA)
  servers.push(server)
  expect(await recorded(server)).toEqual({
    networks: [{ network: 'base-sepolia', chain_id: 84532, token: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }],
  })
  await server.stop()

  const mainnet = await refusal(server, MAINNET)
  expect(mainnet).toContain(
    `trellis: ${recordsNamed(server)} holds a ledger of base-sepolia (chain 84532, token ` +
      `0x036CbD53842c5426634e7929541eC2318f3dCF7e) but this start is for base (chain 8453, token ` +
      `0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913), without base-sepolia (chain 84532, token ` +
      `0x036CbD53842c5426634e7929541eC2318f3dCF7e): start it with every network it was made with (more may be ` +
      `added), or set TRELLIS_ALLOW_CHAIN_CHANGE=1`,
  )
  expect(await refusal(server, OTHER_TOKEN)).toContain(
    'but this start is for base-sepolia (chain 84532, token 0x1111111111111111111111111111111111111111), without base-sepolia',
  )

  const ledger = await trellis(['verify-ledger'], server.dataDir, MAINNET)
  expect(ledger.code).toBe(2)
  expect(ledger.stderr).toContain('holds a ledger of base-sepolia (chain 84532')

  // The same settings again: it starts; the case of the token address does not matter.
  await server.restart({ ...SEPOLIA, TRELLIS_USDC_ADDRESS: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' })
  await server.stop()
})

test('TRELLIS_ALLOW_CHAIN_CHANGE=1 rebinds it, with a warning naming both; then the old chain is the refused one', async () => {
  const server = await startTestServer(SEPOLIA)
  servers.push(server)
  await server.restart({ ...MAINNET, TRELLIS_ALLOW_CHAIN_CHANGE: '1' })
  const warning = server.logs.map((line) => JSON.parse(line)).find((line) => line.msg?.startsWith('data directory rebound'))
  expect(warning).toMatchObject({
    level: 'warn',
    previous: [{ network: 'base-sepolia', chain_id: 84532 }],
    current: [{ network: 'base', chain_id: 8453 }],
  })
  expect(await recorded(server)).toEqual({
    networks: [{ network: 'base', chain_id: 8453, token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }],
  })
  await server.restart(MAINNET) // bound to base now: no override needed
  expect(await refusal(server, SEPOLIA)).toContain('holds a ledger of base (chain 8453')
})

test('a data directory made before the record adopts the settings of its first start after the upgrade', async () => {
  const server = await startTestServer(SEPOLIA)
  servers.push(server)
  await server.stop()
  await withRecords(server, (db) => db.run(`DELETE FROM meta WHERE key = 'chain_binding'`)) // as an older Trellis left it
  await server.restart(MAINNET)
  expect(await recorded(server)).toMatchObject({ networks: [{ network: 'base', chain_id: 8453 }] })
  expect(await refusal(server, SEPOLIA)).toContain('holds a ledger of base (chain 8453')
})

// Issue 40: a directory bound to {A} may sell on {A, B} (logged); then {B} alone, or A with another token, is refused.
const TWO = { ...SEPOLIA, TRELLIS_NETWORKS: 'base-sepolia,polygon-amoy', TRELLIS_RPC_URL_POLYGON_AMOY: 'http://127.0.0.1:9' }
const AMOY_ONLY = { TRELLIS_NETWORK: 'polygon-amoy', TRELLIS_RPC_URL: 'http://127.0.0.1:9' }

test('a network added is allowed and logged; one dropped is refused, the server and verify-ledger alike', async () => {
  const server = await startTestServer(SEPOLIA)
  servers.push(server)
  await server.restart(TWO)
  const added = server.logs.map((line) => JSON.parse(line)).find((line) => line.msg?.startsWith('data directory bound to more'))
  expect(added).toMatchObject({ level: 'info', added: [{ network: 'polygon-amoy', chain_id: 80002 }] })
  expect((await recorded(server)).networks.map((one: { network: string }) => one.network)).toEqual(['base-sepolia', 'polygon-amoy'])
  // Listed the other way round: the same chains, kept as they are.
  await server.restart({ ...TWO, TRELLIS_NETWORKS: 'polygon-amoy,base-sepolia', TRELLIS_RPC_URL_BASE_SEPOLIA: 'http://127.0.0.1:9' })
  expect((await recorded(server)).networks.map((one: { network: string }) => one.network)).toEqual(['base-sepolia', 'polygon-amoy'])
  await server.stop()
  expect(await refusal(server, AMOY_ONLY)).toContain('without base-sepolia (chain 84532')
  expect(await refusal(server, SEPOLIA)).toContain('without polygon-amoy (chain 80002')
  const ledger = await trellis(['verify-ledger'], server.dataDir, SEPOLIA)
  expect(ledger.code).toBe(2)
  expect(ledger.stderr).toContain('without polygon-amoy (chain 80002')
})

test("a one-network binding as an older Trellis wrote it is read as that network's", async () => {
  const server = await startTestServer(SEPOLIA)
  servers.push(server)
  await server.stop()
  const old = JSON.stringify({ network: 'base-sepolia', chain_id: 84532, token: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' })
  await withRecords(server, (db) => db.run(`UPDATE meta SET value = ? WHERE key = 'chain_binding'`, [old]))
  await server.restart(SEPOLIA)
  expect(await recorded(server)).toEqual(JSON.parse(old)) // kept as it was: nothing added
  await server.stop()
  expect(await refusal(server, MAINNET)).toContain('holds a ledger of base-sepolia (chain 84532')
})
