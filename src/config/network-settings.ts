// The networks a server sells on, each with its own endpoint, token and settler: TRELLIS_NETWORKS (base,polygon,…)
// or TRELLIS_NETWORK (one), and for each the variables of one network with its name appended in upper case
// (TRELLIS_RPC_URL_POLYGON_AMOY, TRELLIS_SETTLEMENT_POLYGON_AMOY, …). The unsuffixed ones are the first network's
// (a suffixed one wins over them): a one-network server is configured as it always was, and a second network never
// inherits the first one's relayer key or facilitator by accident.
import { NETWORK_NAMES, NETWORKS, networkSuffix, type NetworkInfo, type NetworkName } from './networks.ts'
import { address, ConfigError, oneOf, read, url, type Environment } from './values.ts'

/** Credentials sent with every facilitator call (src/chain/facilitator-auth.ts). */
export type FacilitatorAuth =
  | { kind: 'none' }
  /** TRELLIS_FACILITATOR_BEARER: a static `Authorization: Bearer` token. */
  | { kind: 'bearer'; token: string }
  /** TRELLIS_CDP_API_KEY_ID + TRELLIS_CDP_API_KEY_SECRET: a Coinbase Developer Platform key signing each call. */
  | { kind: 'cdp'; keyId: string; keySecret: string }

/** A network sold on, with who settles there and how. */
export interface NetworkSettings extends NetworkInfo {
  settlement: 'facilitator' | 'local'
  /** The wallet that pays gas when settling here in process (`local`). */
  relayerKey: string | null
  facilitatorUrl: string
  facilitatorAuth: FacilitatorAuth
}

const DEFAULT_NETWORK: NetworkName = 'base-sepolia'

/** The names listed, in order: TRELLIS_NETWORKS, else TRELLIS_NETWORK, else base-sepolia. */
export function networkNamesFrom(env: Environment): NetworkName[] {
  const one = read(env, 'TRELLIS_NETWORK', oneOf(NETWORK_NAMES, DEFAULT_NETWORK))
  const listed = env.TRELLIS_NETWORKS?.trim()
  if (!listed) return [one]
  const names = listed.split(',').map((name) => name.trim())
  const unknown = names.find((name) => !(NETWORK_NAMES as readonly string[]).includes(name))
  if (unknown !== undefined) throw new ConfigError(`TRELLIS_NETWORKS names "${unknown}": known networks are ${NETWORK_NAMES.join(', ')}`)
  const twice = names.find((name, at) => names.indexOf(name) !== at)
  if (twice !== undefined) throw new ConfigError(`TRELLIS_NETWORKS names ${twice} twice`)
  if (env.TRELLIS_NETWORK && env.TRELLIS_NETWORK !== names[0])
    throw new ConfigError(`TRELLIS_NETWORK=${env.TRELLIS_NETWORK} is not the first of TRELLIS_NETWORKS (${names[0]}): unset one of them`)
  const kinds = new Set(names.map((name) => NETWORKS[name as NetworkName].mainnet))
  if (kinds.size > 1)
    throw new ConfigError(
      `TRELLIS_NETWORKS mixes mainnets and testnets (${names.join(',')}): real money and test tokens never share a ledger`,
    )
  return names as NetworkName[]
}

/** One network's variables: its suffixed name, or (the first network) the plain one. */
function variablesOf(env: Environment, name: NetworkName, first: boolean) {
  const suffix = networkSuffix(name)
  /** The variable that gives `base` here: the suffixed one when set, else the plain one for the first network. */
  const named = (base: string): string => {
    const own = `${base}_${suffix}`
    return env[own] || !first ? own : base
  }
  return { named, value: (base: string): string | undefined => env[named(base)] || undefined }
}

export function networkSettingsFrom(env: Environment): NetworkSettings[] {
  return networkNamesFrom(env).map((name, at) => settingsOf(env, name, at === 0))
}

function settingsOf(env: Environment, name: NetworkName, first: boolean): NetworkSettings {
  const v = variablesOf(env, name, first)
  const known = NETWORKS[name]
  const rpcUrl = read(env, v.named('TRELLIS_RPC_URL'), url)
  const { settlement, relayerKey } = settlementOf(v)
  const facilitatorAuth = facilitatorAuthOf(v)
  return {
    ...known,
    rpcUrl: rpcUrl ?? known.rpcUrl,
    rpcConfigured: rpcUrl !== null,
    usdcAddress: read(env, v.named('TRELLIS_USDC_ADDRESS'), address(known.usdcAddress)),
    usdcName: v.value('TRELLIS_USDC_NAME') ?? known.usdcName,
    usdcVersion: v.value('TRELLIS_USDC_VERSION') ?? known.usdcVersion,
    settlement,
    relayerKey,
    facilitatorUrl: facilitatorUrlOf(env, v, facilitatorAuth),
    facilitatorAuth,
  }
}

type Variables = ReturnType<typeof variablesOf>

/** Who settles: a facilitator, or this server with its own wallet paying the gas. */
function settlementOf(v: Variables): { settlement: 'facilitator' | 'local'; relayerKey: string | null } {
  const relayerKey = v.value('TRELLIS_RELAYER_KEY') ?? null
  if (relayerKey && !/^0x[0-9a-fA-F]{64}$/.test(relayerKey))
    throw new ConfigError(`${v.named('TRELLIS_RELAYER_KEY')} must be a 0x-prefixed 32-byte hex key`)
  const variable = v.named('TRELLIS_SETTLEMENT')
  const settlement = oneOf(['facilitator', 'local'] as const, 'facilitator')(variable, v.value('TRELLIS_SETTLEMENT'))
  if (settlement === 'local' && !relayerKey)
    throw new ConfigError(`${variable}=local needs ${v.named('TRELLIS_RELAYER_KEY')} (the wallet that pays gas)`)
  return { settlement, relayerKey }
}

function facilitatorAuthOf(v: Variables): FacilitatorAuth {
  const bearer = v.value('TRELLIS_FACILITATOR_BEARER') ?? null
  const cdpKeyId = v.value('TRELLIS_CDP_API_KEY_ID') ?? null
  const cdpKeySecret = v.value('TRELLIS_CDP_API_KEY_SECRET') ?? null
  const [id, secret, bearerName] = ['TRELLIS_CDP_API_KEY_ID', 'TRELLIS_CDP_API_KEY_SECRET', 'TRELLIS_FACILITATOR_BEARER'].map(v.named)
  if (Boolean(cdpKeyId) !== Boolean(cdpKeySecret))
    throw new ConfigError(`${id} and ${secret} go together (a CDP API key: its id and its secret)`)
  if (bearer && cdpKeyId) throw new ConfigError(`set ${bearerName} or the ${id}/_SECRET pair, not both`)
  if (bearer !== null && !/^[\x21-\x7e]+$/.test(bearer)) throw new ConfigError(`${bearerName} must be one token of printable characters`)
  if (cdpKeyId && cdpKeySecret) return { kind: 'cdp', keyId: cdpKeyId, keySecret: cdpKeySecret }
  return bearer ? { kind: 'bearer', token: bearer } : { kind: 'none' }
}

function facilitatorUrlOf(env: Environment, v: Variables, auth: FacilitatorAuth): string {
  // A CDP key without a facilitator URL means Coinbase's facilitator.
  const fallback = auth.kind === 'cdp' ? 'https://api.cdp.coinbase.com/platform/v2/x402' : 'https://x402.org/facilitator'
  return read(env, v.named('TRELLIS_FACILITATOR_URL'), url) ?? fallback
}
