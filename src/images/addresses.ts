/**
 * Which network addresses an image URL may reach. An items file is untrusted: its URLs must
 * not make rubricate call this machine, its network or a cloud's metadata service. The
 * check is made on addresses, never on how a URL spells its host, so the WHATWG spellings
 * of 127.0.0.1 (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`) and IPv4-mapped IPv6
 * (`[::ffff:127.0.0.1]`) are all the same loopback address by the time they are checked.
 */
import { BlockList, isIP } from 'node:net';

/** Address kinds refused, in the order they are tested (the first match names the refusal). */
const refusedRanges: ReadonlyArray<{ kind: string; v4?: ReadonlyArray<[string, number]>; v6?: ReadonlyArray<[string, number]> }> = [
  { kind: 'unspecified', v4: [['0.0.0.0', 8]], v6: [['::', 128]] },
  { kind: 'loopback', v4: [['127.0.0.0', 8]], v6: [['::1', 128]] },
  { kind: 'private', v4: [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]], v6: [['fc00::', 7]] },
  { kind: 'shared (CGNAT)', v4: [['100.64.0.0', 10]] },
  { kind: 'link-local', v4: [['169.254.0.0', 16]], v6: [['fe80::', 10]] },
  { kind: 'multicast', v4: [['224.0.0.0', 4]], v6: [['ff00::', 8]] },
  // 240/4 (with the broadcast address) is reserved; ::/96 is the deprecated IPv4-compatible form.
  { kind: 'reserved', v4: [['240.0.0.0', 4]], v6: [['::', 96]] },
];

/** One BlockList per kind; Node's BlockList also applies the IPv4 rules to IPv4-mapped IPv6 (`::ffff:a.b.c.d`). */
const refusedLists = refusedRanges.map(({ kind, v4 = [], v6 = [] }) => {
  const list = new BlockList();
  for (const [network, prefix] of v4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of v6) list.addSubnet(network, prefix, 'ipv6');
  return { kind, list };
});

/** Why an IP address may not be reached by an image URL (`loopback`, `private`, …), or undefined when it may. */
export function refusedAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return refusedLists.find(({ list }) => list.check(address, type))?.kind;
}

/** The IP address a URL's host names literally (brackets of IPv6 removed), or undefined for a host name. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}
