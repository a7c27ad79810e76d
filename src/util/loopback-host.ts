/**
 * The one check of "does this name the loopback interface", for every service that answers on
 * loopback only (`rubricate view`, `serve` without a token, `fake-judge`). A page on another
 * site can make the browser send requests to such a service under a name it controls (DNS
 * rebinding): only a Host header that cannot belong to anyone else is accepted. Those are
 * `localhost` and the names under it (RFC 6761 reserves them for loopback), an IPv4 address of
 * 127.0.0.0/8 written as four plain decimal numbers, and `[::1]`, each with an optional port.
 * Anything else is refused, however it begins: `127.0.0.1.attacker.example` is a name in the
 * attacker's zone.
 */

const label = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const localhostName = new RegExp(`^(?:${label}\\.)*localhost$`);
/** A decimal octet as an address is written: no sign, no leading zero (`010` is octal to some parsers). */
const octet = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const loopbackIpv4 = new RegExp(`^127\\.${octet}\\.${octet}\\.${octet}$`);

/** Whether a bare host name or address (no port, no brackets; as a bind address is written) is loopback. */
export function isLoopbackHostname(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower === '::1') return true;
  return localhostName.test(lower) || loopbackIpv4.test(lower);
}

function validPort(port: string | undefined): boolean {
  if (port === undefined) return true;
  return /^[0-9]{1,5}$/.test(port) && Number(port) <= 65_535;
}

/**
 * Whether a Host header value (`name`, `name:port`, `[::1]:port`) names the loopback interface,
 * by the rule above. A header that is not well formed is not loopback.
 */
export function isLoopbackHostHeader(value: string): boolean {
  const host = value.toLowerCase();
  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(host);
  if (bracketed) return bracketed[1] === '::1' && validPort(bracketed[2]);
  const plain = /^([^:[\]]+)(?::([^:]*))?$/.exec(host);
  return plain !== null && isLoopbackHostname(plain[1]) && validPort(plain[2]);
}
