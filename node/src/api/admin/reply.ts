/**
 * What the admin core consumes and produces, independent of the transport:
 * the HTTP edge builds an `AdminCall` from a verified request, a forwarded
 * call arrives as one over internode RPC, and both write the `AdminReply`
 * back as it is. (The types live with the internode transport that carries
 * them.)
 */
export type { AdminCall, AdminReply } from '../../cluster/admin-peer.ts';

/** `Retry-After` on 503 answers (SPEC Limits: client retry hint). */
export const RETRY_AFTER_SECONDS = 5;

/** Header naming the node that executed an admin request (the pool leader for forwarded ones). */
export const ADMIN_NODE_HEADER = 'x-svc-admin-node';
