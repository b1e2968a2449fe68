/** The manual rebalance operation. Pure. */
import { Pass, rebalanceStep } from './steps.ts';

export function manualRebalance(pass: Pass): void {
  if (rebalanceStep(pass) === 'wait') return;
  pass.endOp('RebalanceFinished', 'requested rebalance finished');
}

// ------------------------------------------------------------- triggers
