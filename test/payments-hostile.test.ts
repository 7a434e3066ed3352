// The hostile payer, the lying facilitator and the failing RPC on a server's only network (test/helpers/hostile-payments.ts).
import { startChain } from '../dev/chain.ts'
import { hostilePayments } from './helpers/hostile-payments.ts'

hostilePayments('one network', async () => ({ chain: await startChain(), others: [], serverEnv: (settings) => settings }))
