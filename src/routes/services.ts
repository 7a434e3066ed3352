// What the routes (and the hot reads serving beside them) need from below; built once in app.ts.
import type { Config } from '../config.ts'
import type { AuthService } from '../domain/auth.ts'
import type { FeedService } from '../domain/feeds.ts'
import type { EntryService } from '../domain/entries.ts'
import type { WalletService } from '../domain/wallets.ts'
import type { CategoryService } from '../domain/categories.ts'
import type { AccessTokens } from '../domain/access-tokens.ts'
import type { TransactionService } from '../domain/transactions.ts'
import type { PurchaseService } from '../domain/purchases.ts'
import type { AccessLinkService } from '../domain/access-links.ts'
import type { PassService } from '../domain/passes.ts'
import type { PassFeedUrlService } from '../domain/pass-feed-urls.ts'
import type { SignInWithX } from '../domain/sign-in-with-x.ts'
import type { StatsService } from '../domain/stats-service.ts'
import type { ModerationService } from '../domain/moderation.ts'
import type { WebhookService } from '../domain/webhooks.ts'
import type { SearchService } from '../domain/search.ts'
import type { WebsubService } from '../domain/websub.ts'
import type { AnalyticsService } from '../domain/analytics.ts'
import type { ChallengeCounter } from '../domain/challenges.ts'
import type { ContentStore } from '../content/store.ts'
import type { PageTokens } from './pagination.ts'
import type { ReadMemo } from '../store/memo.ts'

export interface Services {
  config: Config
  /** Base of absolute URLs we hand out (access_url, content_url, x402 resource). */
  publicUrl: () => string
  auth: AuthService
  feeds: FeedService
  entries: EntryService
  wallets: WalletService
  categories: CategoryService
  transactions: TransactionService
  purchases: PurchaseService
  accessLinks: AccessLinkService
  passes: PassService
  /** A pass holder's private feed URL: issued, revoked, and what its token opens. */
  passFeedUrls: PassFeedUrlService
  /** Sign-in-with-x: the challenge a 402 offers, and the check of a proof. */
  siwx: SignInWithX
  stats: StatsService
  moderation: ModerationService
  /** Full-text search over feeds and entries. */
  search: SearchService
  webhooks: WebhookService
  /** The WebSub hub of the public feeds: subscriptions, their verification and content distribution. */
  websub: WebsubService
  /** A wallet's own analytics, and its sales as CSV. */
  analytics: AnalyticsService
  /** The 402 challenges served: each route that answers one tells it (synchronously); a job writes the counts. */
  challenges: ChallengeCounter
  accessTokens: AccessTokens
  content: ContentStore
  pages: PageTokens
  /** JSON text of a read, reused until the database next changes (see readMemo). */
  cached: ReadMemo
  health: () => Record<string, unknown>
  /** The client's address (see edge/request-wrapper.ts), once serve() listens; absent for an app answering in process. */
  clientAddress?: (request: Request) => string
}
