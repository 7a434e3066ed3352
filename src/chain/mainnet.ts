// Refusals before a server settles real money with test settings: on a mainnet (as the network table marks it), a
// facilitator that settles testnets only would refuse every payment (or worse, a misconfigured one would claim them),
// and a test token's "sales" would be recorded as mainnet revenue. Each network sold on is checked; each refusal is
// one line naming what to set.
import { ConfigError, NETWORKS, type Config, type NetworkSettings } from '../config.ts'
import { networkSuffix, TEST_NETWORKS, TEST_TOKENS } from '../config/networks.ts'
import { cdpSigningKey, FacilitatorKeyError } from './facilitator-auth.ts'

/** Facilitators that settle testnets only (x402.org's public one is the default). */
const TESTNET_ONLY_FACILITATORS = new Set(['x402.org', 'www.x402.org'])

const TEST_TOKEN_SET = new Set(TEST_TOKENS.map((a) => a.toLowerCase()))

/** Throws a ConfigError when these settings cannot be used as they are (a bad CDP key; test settings on mainnet). */
export function checkSettlementSettings(config: Config): void {
  for (const [at, network] of config.networks.entries()) checkNetwork(network, at === 0)
}

function checkNetwork(network: NetworkSettings, first: boolean): void {
  // The first network's variables are also read unsuffixed: named so, as a one-network server's always were.
  const named = (base: string) => (first ? base : `${base}_${networkSuffix(network.name)}`)
  const listed = first ? `TRELLIS_NETWORK=${network.name}` : `TRELLIS_NETWORKS names ${network.name}, which`
  if (network.settlement === 'facilitator' && network.facilitatorAuth.kind === 'cdp') {
    try {
      cdpSigningKey(network.facilitatorAuth.keySecret)
    } catch (error) {
      if (error instanceof FacilitatorKeyError) throw new ConfigError(error.message)
      throw error
    }
  }
  if (!network.mainnet) return
  if (TEST_TOKEN_SET.has(network.usdcAddress.toLowerCase())) {
    throw new ConfigError(
      `${listed} is mainnet but ${named('TRELLIS_USDC_ADDRESS')} ${network.usdcAddress} is ` +
        `a testnet token: unset it (${network.label} USDC is ${NETWORKS[network.name].usdcAddress}) or ` +
        `set TRELLIS_NETWORK=${TEST_NETWORKS.join(' or ')}`,
    )
  }
  if (network.settlement === 'facilitator' && TESTNET_ONLY_FACILITATORS.has(new URL(network.facilitatorUrl).hostname)) {
    throw new ConfigError(
      `${listed} is mainnet but the facilitator ${network.facilitatorUrl} ` +
        `settles testnets only: set ${named('TRELLIS_CDP_API_KEY_ID')} and ${named('TRELLIS_CDP_API_KEY_SECRET')} ` +
        `(Coinbase's facilitator), or ${named('TRELLIS_FACILITATOR_URL')} (with ${named('TRELLIS_FACILITATOR_BEARER')} ` +
        `if it wants a token) to a mainnet facilitator, or ${named('TRELLIS_SETTLEMENT')}=local with ` +
        named('TRELLIS_RELAYER_KEY'),
    )
  }
}
