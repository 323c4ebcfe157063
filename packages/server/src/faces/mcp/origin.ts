import type { onRequestHookHandler } from 'fastify';
import type { Config } from '../../kernel/config.js';
import { ForbiddenError } from '../../kernel/errors.js';

/**
 * An Origin header as `scheme://host[:port]` the way PUBLIC_URL is written (lower case, no default
 * port, no trailing slash), so a client spelling the same origin differently is not refused; undefined
 * for `null` (an opaque origin) and anything that is not an http(s) origin.
 */
function normalOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** A Host header as `host[:port]`, lower case, with the scheme's default port left out; '' when absent or bad. */
function normalHost(host: string, protocol: string): string {
  try {
    return host === '' ? '' : new URL(`${protocol}//${host}`).host;
  } catch {
    return '';
  }
}

/**
 * MCP's Streamable HTTP transport requires servers to validate Origin (403 when present and invalid)
 * against DNS rebinding. A browser names its page's origin; a rebinding page also sends its own name as
 * Host. So a request with Origin must come from PUBLIC_URL or an origin in MCP_ALLOWED_ORIGINS, and
 * must name this registry's host. Without Origin no browser page is involved (browsers send it on
 * every POST), so non-browser clients keep reaching any node by any name.
 */
export function mcpOriginGuard(config: {
  identity: Pick<Config['identity'], 'publicUrl'>;
  network: Pick<Config['network'], 'mcpAllowedOrigins'>;
}): onRequestHookHandler {
  const publicUrl = new URL(config.identity.publicUrl);
  const allowedOrigins = new Set([publicUrl.origin, ...config.network.mcpAllowedOrigins]);
  const ownHost = publicUrl.host;
  return (request, _reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined) {
      done();
      return;
    }
    const given = normalOrigin(origin);
    if (given === undefined || !allowedOrigins.has(given)) {
      done(
        new ForbiddenError(
          'ORIGIN_NOT_ALLOWED',
          `Origin ${origin.slice(0, 200)} may not call this MCP endpoint; browsers may call it from ${[...allowedOrigins].join(', ')} (the operator adds origins with MCP_ALLOWED_ORIGINS), and clients outside a browser send no Origin`,
        ),
      );
      return;
    }
    // request.host honours X-Forwarded-Host when TRUST_PROXY is set, as the proxy saw it.
    if (normalHost(request.host, publicUrl.protocol) !== ownHost) {
      done(
        new ForbiddenError(
          'HOST_NOT_ALLOWED',
          `Host ${request.host.slice(0, 200)} is not this registry's; browsers reach its MCP endpoints at ${publicUrl.origin}`,
        ),
      );
      return;
    }
    done();
  };
}
