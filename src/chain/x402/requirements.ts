// The x402 payment requirement for one paid entry, in the v1 body form and the v2 header form.
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types'
import type { Static } from '@sinclair/typebox'
import type { PaymentRequirement } from '../../models/payment.ts'
import type { NetworkInfo } from '../../config.ts'
import { caip2 } from './networks.ts'
import { serviceMetadata } from './bazaar.ts'

export const MAX_TIMEOUT_SECONDS = 300

/** What a paid entry costs at one URL (built by the domain, see entries.priceTag); requirements are rebuilt from it. */
export interface PriceTag {
  amount: string // smallest unit
  payTo: string
  resource: string // absolute URL
  description: string
  mimeType: string
  /** How the URL is called and what it answers, which the 402 declares in extensions.bazaar (see bazaar.ts). */
  call?: ResourceCall
}

/** A paid URL as x402's bazaar extension describes it. */
export interface ResourceCall {
  method: 'GET' | 'POST'
  /** The route the URL is one of, in `:param` form (`/v1/feeds/:feed_id/entries/:entry_id`). */
  route: string
  /** What a paid call answers: its media type, and an example of it when it is JSON. */
  returns: { mediaType: string; example?: Record<string, unknown> }
  /** Topical tags of what is sold (the entry's or the feed's), offered as the bazaar's resource tags. */
  tags: string[]
}

/**
 * The v1 requirement, as documented to clients (models/payment.ts); @x402/core types v1 networks as CAIP-2 ids, which
 * v1 clients refuse.
 */
export function v1Requirement(network: NetworkInfo, tag: PriceTag): Static<typeof PaymentRequirement> {
  return {
    scheme: 'exact',
    network: network.name,
    maxAmountRequired: tag.amount,
    resource: tag.resource,
    description: tag.description,
    mimeType: tag.mimeType,
    payTo: tag.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: network.usdcAddress,
    extra: { name: network.usdcName, version: network.usdcVersion },
  }
}

export function v2Requirement(network: NetworkInfo, tag: PriceTag): PaymentRequirements {
  return {
    scheme: 'exact',
    network: caip2(network),
    amount: tag.amount,
    asset: network.usdcAddress,
    payTo: tag.payTo,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: network.usdcName, version: network.usdcVersion },
  }
}

/** The v2 challenge: one requirement per network sold on, in their order. */
export function v2Challenge(networks: readonly NetworkInfo[], tag: PriceTag, error: string): PaymentRequired {
  return {
    x402Version: 2,
    error,
    resource: { url: tag.resource, description: tag.description, mimeType: tag.mimeType, ...serviceMetadata(tag) },
    accepts: networks.map((network) => v2Requirement(network, tag)),
  }
}
