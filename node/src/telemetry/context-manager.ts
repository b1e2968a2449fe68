/**
 * The OpenTelemetry context manager of this process, backed by one
 * `AsyncLocalStorage` that the bridge also binds to the diagnostics channels
 * (`channel.bindStore`): a request handler started with `runStores` then runs
 * with its span active, and every `context.active()` below it (internode
 * calls, drive I/O, log records) sees that span, with no tracer threaded
 * through the storage code.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

export class ChannelContextManager implements ContextManager {
  readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.storage.run(context, () => fn.apply(thisArg, args));
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as (...args: unknown[]) => unknown;
    const with_ = this.with.bind(this);
    return function (this: unknown, ...args: unknown[]) {
      return with_(context, fn, this, ...args);
    } as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
