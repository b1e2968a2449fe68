/**
 * The heal route's service: rule 5 was applied by the parameter validator;
 * what is left is the heal engine behind `HealWorker`. Without one, a valid
 * start is answered `NotImplemented` naming the missing engine, and a status
 * or stop names a token no heal sequence carries (none ever ran here).
 */
import { SvcError } from '../../util/errors.ts';
import type { HealAdmin, HealWorker } from './services.ts';

export function healAdmin(worker: () => HealWorker | undefined): HealAdmin {
  return {
    async heal(call) {
      const w = worker();
      if (w !== undefined) return w.heal(call);
      if (call.kind === 'start') {
        throw new SvcError('NotImplemented', 'the heal request is valid, but this build has no heal engine yet (object heal lands with background healing); nothing was started');
      }
      throw new SvcError('XSvcHealInvalidClientToken', `no heal sequence has client token "${call.clientToken}" on this cluster; start a heal first (it returns the token)`);
    },
  };
}
