// The only place that reads environment variables; command-line.ts puts the flags over them (flags win). Its parts:
// config/flags.ts (the variables that have a flag, and the help), config/environment.ts (those that have none),
// config/networks.ts (the chains), config/values.ts (how a variable's text is read and refused).
import { FLAGS, type FlagValues } from './config/flags.ts'
import {
  contentFrom,
  directUrlFrom,
  metricsAuthFrom,
  replicaUrlsFrom,
  SETTINGS,
  testHookSettings,
  type ContentPlace,
  type SettingValues,
  type TestHookSettings,
} from './config/environment.ts'
import { networkSettingsFrom, type NetworkSettings } from './config/network-settings.ts'
import { readAll, type Environment } from './config/values.ts'
import { tracesFrom, type TracesConfig } from './config/traces.ts'

export { DATA_COMMANDS, HELP, type DataCommand } from './config/flags.ts'
export type { ContentPlace, LogLevel } from './config/environment.ts'
export type { FacilitatorAuth, NetworkSettings } from './config/network-settings.ts'
export type { TracesConfig } from './config/traces.ts'
export { NETWORKS, type NetworkInfo, type NetworkName } from './config/networks.ts'
export { ConfigError, isWildcardHost, urlHost } from './config/values.ts'
export { checkLocalWebhooks } from './config/environment.ts'

export interface Config extends Omit<FlagValues, 'network' | 'networks'>, SettingValues, TestHookSettings {
  /** The networks sold on, in the order listed; each with its endpoint, token and settler. */
  networks: NetworkSettings[]
  /** The first of them: where wallets sign in (x402 sign-in-with-x) and what one-network answers name. */
  network: NetworkSettings
  /** 'admin': /metrics answers only with the admin-api-key header. */
  metricsAuth: 'public' | 'admin'
  content: ContentPlace
  /** OpenTelemetry traces (OTEL_* variables), null: off. */
  traces: TracesConfig | null
}

export function configFrom(env: Environment): Config {
  // The checks run in the order they always have, so that of several bad variables the same one is named.
  const networks = networkSettingsFrom(env)
  const metricsAuth = metricsAuthFrom(env)
  const flags = readAll(FLAGS, env)
  directUrlFrom(flags.databaseUrl, flags.databaseDirectUrl)
  replicaUrlsFrom(flags.databaseUrl, flags.databaseReplicaUrls)
  const content = contentFrom(flags.contentUrl, flags.databaseUrl)
  return {
    ...flags,
    networks,
    network: networks[0]!,
    metricsAuth,
    content,
    ...readAll(SETTINGS, env),
    traces: tracesFrom(env),
    ...testHookSettings(env),
  }
}

/** The networks sold on, for people: "base, polygon". */
export const soldOnNames = (config: Pick<Config, 'networks'>): string => config.networks.map((network) => network.name).join(', ')
