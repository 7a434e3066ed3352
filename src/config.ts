// The only place that reads environment variables; command-line.ts puts the flags over them (flags win). Its parts:
// config/flags.ts (the variables that have a flag, and the help), config/environment.ts (those that have none),
// config/networks.ts (the chains), config/values.ts (how a variable's text is read and refused).
import { FLAGS, type FlagValues } from './config/flags.ts'
import {
  contentFrom,
  directUrlFrom,
  facilitatorAuthFrom,
  facilitatorUrlFrom,
  metricsAuthFrom,
  networkFrom,
  replicaUrlsFrom,
  SETTINGS,
  settlementFrom,
  testHookSettings,
  type ContentPlace,
  type FacilitatorAuth,
  type SettingValues,
  type TestHookSettings,
} from './config/environment.ts'
import type { NetworkInfo } from './config/networks.ts'
import { read, readAll, type Environment } from './config/values.ts'
import { tracesFrom, type TracesConfig } from './config/traces.ts'

export { DATA_COMMANDS, HELP, type DataCommand } from './config/flags.ts'
export type { ContentPlace, FacilitatorAuth, LogLevel } from './config/environment.ts'
export type { TracesConfig } from './config/traces.ts'
export { NETWORKS, type NetworkInfo, type NetworkName } from './config/networks.ts'
export { ConfigError, isWildcardHost, urlHost } from './config/values.ts'
export { checkLocalWebhooks } from './config/environment.ts'

export interface Config extends Omit<FlagValues, 'network'>, SettingValues, TestHookSettings {
  network: NetworkInfo
  settlement: 'facilitator' | 'local'
  facilitatorUrl: string
  facilitatorAuth: FacilitatorAuth
  relayerKey: string | null
  /** 'admin': /metrics answers only with the admin-api-key header. */
  metricsAuth: 'public' | 'admin'
  content: ContentPlace
  /** OpenTelemetry traces (OTEL_* variables), null: off. */
  traces: TracesConfig | null
}

export function configFrom(env: Environment): Config {
  // The checks run in the order they always have, so that of several bad variables the same one is named.
  const network = read(env, FLAGS.network.variable, FLAGS.network.read)
  const { settlement, relayerKey } = settlementFrom(env)
  const metricsAuth = metricsAuthFrom(env)
  const facilitatorAuth = facilitatorAuthFrom(env)
  const flags = readAll(FLAGS, env)
  directUrlFrom(flags.databaseUrl, flags.databaseDirectUrl)
  replicaUrlsFrom(flags.databaseUrl, flags.databaseReplicaUrls)
  const content = contentFrom(flags.contentUrl, flags.databaseUrl)
  return {
    ...flags,
    network: networkFrom(network, env),
    settlement,
    facilitatorUrl: facilitatorUrlFrom(env, facilitatorAuth),
    facilitatorAuth,
    relayerKey,
    metricsAuth,
    content,
    ...readAll(SETTINGS, env),
    traces: tracesFrom(env),
    ...testHookSettings(env),
  }
}
