// The network table (src/config/networks.ts) is the one place that says what a chain is: the mainnet refusals read
// its mark, not a network's name, so a network marked mainnet gets them whatever it is called; and x-chain-id names
// a new wallet's network by it. The refusals of Base mainnet at a real server's start are in facilitator-auth.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { configFrom, ConfigError, NETWORKS, type Config } from '../src/config.ts'
import { CHAINS, NETWORK_NAMES, TEST_NETWORKS, TEST_TOKENS } from '../src/config/networks.ts'
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
    expect(NETWORK_NAMES.filter((name) => NETWORKS[name].mainnet)).toEqual([
      'base',
      'ethereum',
      'polygon',
      'arbitrum',
      'avalanche',
      'monad',
      'celo',
      'sei',
      'xdc',
      'adi',
      'hpp',
    ])
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
          `TRELLIS_NETWORK=${TEST_NETWORKS.join(' or ')}`,
      )
    }
  })

  test("a network marked mainnet gets the refusals whatever its name (here Base Sepolia's row, marked mainnet)", () => {
    const asMainnet = (config: Config): Config => {
      const network = { ...config.network, mainnet: true }
      return { ...config, network, networks: [network] }
    }
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
    for (const other of ['eip155:11155111', 'ethereum-sepolia', 'eip155:08453', 'eip155:84532 ', 'solana:mainnet', 'Base', 8453, null])
      expect({ other, named: networkNamed(other) }).toEqual({ other, named: null })
  })
})

describe('the tokens are those the x402 packages sign with', () => {
  test("every settled network's USDC is @x402/evm 2.27's default asset there (or x402 1.2's, where it ships none)", async () => {
    const { DEFAULT_ASSETS } = await import('@x402/evm')
    const { getDefaultAsset } = await import('x402/shared')
    for (const name of NETWORK_NAMES) {
      const network = NETWORKS[name]
      const shipped = (DEFAULT_ASSETS as unknown as Record<string, { asset: string; name: string; version: string }[] | undefined>)[
        network.caip2
      ]
      const usdc = shipped?.find((one) => one.asset.toLowerCase() === network.usdcAddress.toLowerCase())
      const fact = { address: network.usdcAddress.toLowerCase(), name: network.usdcName, version: network.usdcVersion }
      if (usdc) {
        expect({ name, fact }).toEqual({ name, fact: { address: usdc.asset.toLowerCase(), name: usdc.name, version: usdc.version } })
        continue
      }
      expect({ name, shippedByEvm: shipped ?? null }).toEqual({ name, shippedByEvm: null })
      const old = getDefaultAsset(name as never) as { address: string; eip712: { name: string; version: string } }
      expect({ name, fact }).toEqual({ name, fact: { address: old.address.toLowerCase(), ...old.eip712 } })
    }
  })
})

describe('TRELLIS_NETWORKS and the variables of each network', () => {
  const KEY = `0x${'11'.repeat(32)}`
  const OTHER_KEY = `0x${'22'.repeat(32)}`
  const failure = (env: Record<string, string>) => {
    try {
      configFrom(env)
      return null
    } catch (error) {
      return (error as Error).message
    }
  }

  test('one network as before; several in the order listed, the first one also read from the unsuffixed variables', () => {
    expect(configFrom({}).networks.map((one) => one.name)).toEqual(['base-sepolia'])
    const config = configFrom({
      TRELLIS_NETWORKS: 'base-sepolia, polygon-amoy,arbitrum-sepolia',
      TRELLIS_RPC_URL: 'http://127.0.0.1:1',
      TRELLIS_SETTLEMENT: 'local',
      TRELLIS_RELAYER_KEY: KEY,
      TRELLIS_RPC_URL_POLYGON_AMOY: 'http://127.0.0.1:2',
      TRELLIS_USDC_ADDRESS_POLYGON_AMOY: '0x1111111111111111111111111111111111111111',
      TRELLIS_USDC_NAME_POLYGON_AMOY: 'USDC',
      TRELLIS_USDC_VERSION_POLYGON_AMOY: '3',
      TRELLIS_SETTLEMENT_POLYGON_AMOY: 'local',
      TRELLIS_RELAYER_KEY_POLYGON_AMOY: OTHER_KEY,
      TRELLIS_FACILITATOR_URL_ARBITRUM_SEPOLIA: 'https://facilitator.example/x402',
      TRELLIS_FACILITATOR_BEARER_ARBITRUM_SEPOLIA: 'token',
    })
    const [first, amoy, arbitrum] = config.networks
    expect(config.network).toBe(first!)
    expect(first).toMatchObject({
      name: 'base-sepolia',
      rpcUrl: 'http://127.0.0.1:1',
      rpcConfigured: true,
      settlement: 'local',
      relayerKey: KEY,
    })
    expect(amoy).toMatchObject({
      name: 'polygon-amoy',
      chainId: 80002,
      rpcUrl: 'http://127.0.0.1:2',
      usdcAddress: '0x1111111111111111111111111111111111111111',
      usdcName: 'USDC',
      usdcVersion: '3',
      settlement: 'local',
      relayerKey: OTHER_KEY,
    })
    // The unsuffixed variables are the first network's only: the third has its own facilitator, its table's token.
    expect(arbitrum).toMatchObject({
      name: 'arbitrum-sepolia',
      rpcUrl: NETWORKS['arbitrum-sepolia'].rpcUrl,
      rpcConfigured: false,
      usdcAddress: NETWORKS['arbitrum-sepolia'].usdcAddress,
      usdcName: 'USD Coin',
      settlement: 'facilitator',
      relayerKey: null,
      facilitatorUrl: 'https://facilitator.example/x402',
      facilitatorAuth: { kind: 'bearer', token: 'token' },
    })
  })

  test('refused in one line: an unknown or repeated name, mainnet beside testnet, a second network settling locally keyless', () => {
    expect(failure({ TRELLIS_NETWORKS: 'base-sepolia,narnia' })).toStartWith('TRELLIS_NETWORKS names "narnia": known networks are base,')
    expect(failure({ TRELLIS_NETWORKS: 'base-sepolia,base-sepolia' })).toBe('TRELLIS_NETWORKS names base-sepolia twice')
    expect(failure({ TRELLIS_NETWORKS: 'base,base-sepolia' })).toStartWith('TRELLIS_NETWORKS mixes mainnets and testnets')
    expect(failure({ TRELLIS_NETWORKS: 'base-sepolia,polygon-amoy', TRELLIS_NETWORK: 'polygon-amoy' })).toBe(
      'TRELLIS_NETWORK=polygon-amoy is not the first of TRELLIS_NETWORKS (base-sepolia): unset one of them',
    )
    expect(
      failure({
        TRELLIS_NETWORKS: 'base-sepolia,polygon-amoy',
        TRELLIS_SETTLEMENT: 'local',
        TRELLIS_RELAYER_KEY: KEY,
        TRELLIS_SETTLEMENT_POLYGON_AMOY: 'local',
      }),
    ).toBe('TRELLIS_SETTLEMENT_POLYGON_AMOY=local needs TRELLIS_RELAYER_KEY_POLYGON_AMOY (the wallet that pays gas)')
  })

  test('each mainnet listed is checked on its own: a second one with the default facilitator is refused by its own variables', () => {
    const config = configFrom({
      TRELLIS_NETWORKS: 'base,polygon',
      TRELLIS_SETTLEMENT: 'local',
      TRELLIS_RELAYER_KEY: KEY,
    })
    expect(refusal(config)).toBe(
      'TRELLIS_NETWORKS names polygon, which is mainnet but the facilitator https://x402.org/facilitator settles testnets ' +
        "only: set TRELLIS_CDP_API_KEY_ID_POLYGON and TRELLIS_CDP_API_KEY_SECRET_POLYGON (Coinbase's facilitator), or " +
        'TRELLIS_FACILITATOR_URL_POLYGON (with TRELLIS_FACILITATOR_BEARER_POLYGON if it wants a token) to a mainnet ' +
        'facilitator, or TRELLIS_SETTLEMENT_POLYGON=local with TRELLIS_RELAYER_KEY_POLYGON',
    )
    expect(
      refusal(
        configFrom({
          TRELLIS_NETWORKS: 'base,polygon',
          TRELLIS_SETTLEMENT: 'local',
          TRELLIS_RELAYER_KEY: KEY,
          TRELLIS_SETTLEMENT_POLYGON: 'local',
          TRELLIS_RELAYER_KEY_POLYGON: KEY,
        }),
      ),
    ).toBeNull()
  })
})
