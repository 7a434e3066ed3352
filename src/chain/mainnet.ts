// Refusals before a server settles real money with test settings: on a mainnet (as the network table marks it), a
// facilitator that settles testnets only would refuse every payment (or worse, a misconfigured one would claim them),
// and a test token's "sales" would be recorded as mainnet revenue. Each refusal is one line naming what to set.
import { ConfigError, NETWORKS, type Config } from '../config.ts'
import { TEST_NETWORKS, TEST_TOKENS } from '../config/networks.ts'
import { cdpSigningKey, FacilitatorKeyError } from './facilitator-auth.ts'

/** Facilitators that settle testnets only (x402.org's public one is the default). */
const TESTNET_ONLY_FACILITATORS = new Set(['x402.org', 'www.x402.org'])

const TEST_TOKEN_SET = new Set(TEST_TOKENS.map((a) => a.toLowerCase()))

/** Throws a ConfigError when these settings cannot be used as they are (a bad CDP key; test settings on mainnet). */
export function checkSettlementSettings(config: Config): void {
  if (config.settlement === 'facilitator' && config.facilitatorAuth.kind === 'cdp') {
    try {
      cdpSigningKey(config.facilitatorAuth.keySecret)
    } catch (error) {
      if (error instanceof FacilitatorKeyError) throw new ConfigError(error.message)
      throw error
    }
  }
  const network = config.network
  if (!network.mainnet) return
  if (TEST_TOKEN_SET.has(network.usdcAddress.toLowerCase())) {
    throw new ConfigError(
      `TRELLIS_NETWORK=${network.name} is mainnet but TRELLIS_USDC_ADDRESS ${network.usdcAddress} is ` +
        `a testnet token: unset it (${network.label} USDC is ${NETWORKS[network.name].usdcAddress}) or ` +
        `set TRELLIS_NETWORK=${TEST_NETWORKS.join(' or ')}`,
    )
  }
  if (config.settlement === 'facilitator' && TESTNET_ONLY_FACILITATORS.has(new URL(config.facilitatorUrl).hostname)) {
    throw new ConfigError(
      `TRELLIS_NETWORK=${network.name} is mainnet but the facilitator ${config.facilitatorUrl} ` +
        `settles testnets only: set TRELLIS_CDP_API_KEY_ID and TRELLIS_CDP_API_KEY_SECRET (Coinbase's ` +
        `facilitator), or TRELLIS_FACILITATOR_URL (with TRELLIS_FACILITATOR_BEARER if it wants a token) ` +
        `to a mainnet facilitator, or TRELLIS_SETTLEMENT=local with TRELLIS_RELAYER_KEY`,
    )
  }
}
