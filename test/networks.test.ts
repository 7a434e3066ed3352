// The network table (src/config/networks.ts) is the one place that says what a chain is: the mainnet refusals read
// its mark, not a network's name, so a network marked mainnet gets them whatever it is called; and x-chain-id names
// a new wallet's network by it. The refusals of Base mainnet at a real server's start are in facilitator-auth.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { configFrom, ConfigError, NETWORKS, type Config } from '../src/config.ts'
import { CHAINS, NETWORK_NAMES, TEST_TOKENS } from '../src/config/networks.ts'
import { checkSettlementSettings } from '../src/chain/mainnet.ts'
import { networkNamed } from '../src/mcp/networks.ts'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { authHeaders, call, newWallet } from '../dev/api.ts'

/** The refusal of these settings, or null when they may be used. */
function refusal(config: Config): string | null {
  try {
    checkSettlementSettings(config)
    return null
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return error.message
  }
}

describe("the mainnet refusals follow the table's mark", () => {
  test('every network marked mainnet refuses the testnet-only facilitator and a test token; a test network refuses neither', () => {
    expect(NETWORK_NAMES.filter((name) => NETWORKS[name].mainnet)).toEqual(['base'])
    for (const name of NETWORK_NAMES) {
      const network = NETWORKS[name]
      const byDefault = refusal(configFrom({ TRELLIS_NETWORK: name }))
      const testToken = refusal(
        configFrom({
          TRELLIS_NETWORK: name,
          TRELLIS_SETTLEMENT: 'local',
          TRELLIS_RELAYER_KEY: `0x${'11'.repeat(32)}`,
          TRELLIS_USDC_ADDRESS: TEST_TOKENS[0],
        }),
      )
      if (!network.mainnet) {
        expect({ name, byDefault, testToken }).toEqual({ name, byDefault: null, testToken: null })
        continue
      }
      expect(byDefault).toStartWith(
        `TRELLIS_NETWORK=${name} is mainnet but the facilitator https://x402.org/facilitator settles testnets only`,
      )
      expect(testToken).toBe(
        `TRELLIS_NETWORK=${name} is mainnet but TRELLIS_USDC_ADDRESS ${TEST_TOKENS[0]} is a testnet ` +
          `token: unset it (${network.label} USDC is ${network.usdcAddress}) or set ` +
          `TRELLIS_NETWORK=base-sepolia`,
      )
    }
  })

  test("a network marked mainnet gets the refusals whatever its name (here Base Sepolia's row, marked mainnet)", () => {
    const asMainnet = (config: Config): Config => ({ ...config, network: { ...config.network, mainnet: true } })
    // Base's USDC as its token, so that the facilitator is the only test setting.
    const sepolia = configFrom({ TRELLIS_NETWORK: 'base-sepolia', TRELLIS_USDC_ADDRESS: NETWORKS.base.usdcAddress })
    expect(refusal(sepolia)).toBeNull()
    expect(refusal(asMainnet(sepolia))).toStartWith(
      'TRELLIS_NETWORK=base-sepolia is mainnet but the facilitator https://x402.org/facilitator settles testnets only',
    )
    // Its own USDC is a test token: refused as a mainnet's token.
    const local = configFrom({ TRELLIS_NETWORK: 'base-sepolia', TRELLIS_SETTLEMENT: 'local', TRELLIS_RELAYER_KEY: `0x${'11'.repeat(32)}` })
    expect(refusal(local)).toBeNull()
    expect(refusal(asMainnet(local))).toStartWith(
      `TRELLIS_NETWORK=base-sepolia is mainnet but TRELLIS_USDC_ADDRESS ${NETWORKS['base-sepolia'].usdcAddress} is a testnet token`,
    )
  })

  test("the table's facts: CAIP-2 from the chain id, the settled networks' rows from the chains'", () => {
    for (const facts of Object.values(CHAINS)) expect(facts.caip2).toBe(`eip155:${facts.chainId}`)
    for (const name of NETWORK_NAMES)
      expect(NETWORKS[name]).toMatchObject({
        chainId: CHAINS[name].chainId,
        caip2: CHAINS[name].caip2,
        mainnet: CHAINS[name].mainnet,
        usdcAddress: CHAINS[name].usdc!,
      })
    expect(TEST_TOKENS.map((token) => token.toLowerCase())).toContain(NETWORKS['base-sepolia'].usdcAddress.toLowerCase())
  })
})

describe("x-chain-id names a new wallet's network from the table", () => {
  let app: InProcessApp
  beforeAll(async () => {
    app = await startInProcess({})
  })
  afterAll(() => app.dispose())

  const networkOfNewWallet = async (chainId: string) => {
    const reply = await call(app, 'POST', '/v1/feeds', {
      headers: await authHeaders(app, newWallet(), chainId),
      body: { name: `signed on ${chainId}` },
    })
    expect({ chainId, status: reply.status }).toEqual({ chainId, status: 201 })
    return (await call(app, 'GET', `/v1/wallets/${reply.body.owner_id}`)).body.network
  }

  test("every chain of the table by its id; an unknown chain id, or an object key, leaves the server's network", async () => {
    for (const facts of Object.values(CHAINS))
      expect({ chainId: facts.chainId, network: await networkOfNewWallet(` ${facts.chainId}`) }).toEqual({
        chainId: facts.chainId,
        network: facts.name,
      })
    for (const chainId of ['999', 'constructor', '__proto__', 'toString'])
      expect({ chainId, network: await networkOfNewWallet(chainId) }).toEqual({ chainId, network: 'base-sepolia' })
  })
})

describe("trellis mcp names a payment's network by the table", () => {
  test('each network settled on, by its name or its CAIP-2 id there; any other chain or spelling is none', () => {
    for (const name of NETWORK_NAMES)
      expect({ name, named: networkNamed(name), caip2: networkNamed(CHAINS[name].caip2) }).toEqual({ name, named: name, caip2: name })
    for (const other of ['eip155:1', 'eip155:08453', 'eip155:84532 ', 'solana:mainnet', 'Base', 8453, null])
      expect({ other, named: networkNamed(other) }).toEqual({ other, named: null })
  })
})
