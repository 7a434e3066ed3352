// The same attacks on the second network of a server that sells on two (issue 40: the hostile payment tests per
// network): chain B (Polygon Amoy, 80002) is behind the fault-injecting proxy and its facilitator; Base Sepolia, first,
// settles undisturbed beside it. What must hold is the same: exactly-once, the chain decides, the books balance.
import { asLaterNetwork, startChain } from '../dev/chain.ts'
import { hostilePayments } from './helpers/hostile-payments.ts'

hostilePayments('the second of two networks', async () => {
  const [first, attacked] = await Promise.all([startChain(), startChain({ network: 'polygon-amoy' })])
  return {
    chain: attacked,
    others: [first],
    serverEnv: (settings) => ({
      ...first.env,
      TRELLIS_NETWORKS: `${first.network},${attacked.network}`,
      ...asLaterNetwork(attacked.network, settings),
    }),
  }
})
