/** Unsigned STS calls (web identity, LDAP) as form POSTs, and what their XML answers carry. */
export interface StsAnswer {
  status: number;
  text: string;
  code: string | undefined;
  message: string | undefined;
  cred?: { ak: string; sk: string; token: string; expiration: Date };
}

export async function stsCall(endpoint: string, form: Record<string, string>): Promise<StsAnswer> {
  const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ Version: '2011-06-15', ...form }).toString() });
  const text = await r.text();
  const pick = (tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(text)?.[1];
  const ak = pick('AccessKeyId');
  return {
    status: r.status,
    text,
    code: pick('Code'),
    message: pick('Message'),
    ...(ak ? { cred: { ak, sk: pick('SecretAccessKey')!, token: pick('SessionToken')!, expiration: new Date(pick('Expiration')!) } } : {}),
  };
}
