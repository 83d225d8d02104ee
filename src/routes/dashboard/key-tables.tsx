// The tables of the keys page: API keys and public OTP tokens, each with its revoke form; a token's allowlist.
import { Csrf, Id, When } from '../../dashboard/views/layout';
import { Table } from '../../dashboard/views/table';
import type { ApiKey } from '../../store/control/credentials';
import type { OtpToken } from '../../store/control/otp-tokens';

export function KeyRows(props: { keys: ApiKey[]; csrf: string; revocable: boolean }) {
  return (
    <Table
      columns={['Name', 'Scopes', 'Mode', 'Created', 'Last used', 'State', ...(props.revocable ? ['Actions'] : [])]}
      rows={props.keys.map((k) => [
        <>
          {k.name ?? <span class="muted">(no name)</span>} <Id value={k.id} />
        </>,
        k.scopes.join(', '),
        k.mode,
        <When iso={k.createdAt} />,
        k.lastUsedAt ? <When iso={k.lastUsedAt} /> : 'never',
        k.revokedAt ? 'revoked' : 'live',
        ...(props.revocable
          ? [
              k.revokedAt ? (
                ''
              ) : (
                <form class="inline" method="post" action={`/dashboard/keys/${k.id}/revoke`}>
                  <Csrf token={props.csrf} />
                  <button type="submit" class="danger" aria-label={`Revoke ${k.name ?? k.id}`}>
                    Revoke
                  </button>
                </form>
              ),
            ]
          : []),
      ])}
      empty="No API keys."
    />
  );
}

export function TokenRows(props: { tokens: OtpToken[]; csrf: string; writable: boolean; revocable: boolean }) {
  return (
    <Table
      columns={['Token', 'IP allowlist', 'Created', 'Last used', 'State', ...(props.revocable ? ['Actions'] : [])]}
      rows={props.tokens.map((t) => [
        <Id value={t.id} />,
        props.writable && !t.revokedAt ? (
          <form class="inline" method="post" action={`/dashboard/otp-tokens/${t.id}/ips`}>
            <Csrf token={props.csrf} />
            <textarea name="allowedIps" rows={2} aria-label={`IP allowlist of ${t.id}`}>
              {t.allowedIps.join('\n')}
            </textarea>
            <button type="submit" class="secondary">
              Save
            </button>
          </form>
        ) : (
          t.allowedIps.join(', ') || 'any address'
        ),
        <When iso={t.createdAt} />,
        t.lastUsedAt ? <When iso={t.lastUsedAt} /> : 'never',
        t.revokedAt ? 'revoked' : 'live',
        ...(props.revocable
          ? [
              t.revokedAt ? (
                ''
              ) : (
                <form class="inline" method="post" action={`/dashboard/otp-tokens/${t.id}/revoke`}>
                  <Csrf token={props.csrf} />
                  <button type="submit" class="danger" aria-label={`Revoke ${t.id}`}>
                    Revoke
                  </button>
                </form>
              ),
            ]
          : []),
      ])}
      empty="No public OTP tokens."
    />
  );
}
