package dev.inspection.inventory;

import dev.inspection.config.Config;
import dev.inspection.config.ConfigException;
import dev.inspection.config.Keys;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which addresses the probe fleet may inspect (issue 13), so that whoever can import devices cannot turn the probes
 * into a scanner of the operator's own network or a reader of a cloud's instance metadata. An address is allowed when
 * it matches no {@code deny} range and, if {@code allow} is not empty, one of the {@code allow} ranges. Ranges are CIDR
 * blocks ({@code 10.0.0.0/8}, {@code fe80::/10}) or single addresses.
 *
 * <p>The probe applies it to the address a host name resolves to, just before it connects (a name that resolves to a
 * metadata address is refused like the address itself); import and PATCH apply it to targets written as an address,
 * so a mistake is refused where it is made. IPv4-mapped IPv6 addresses are judged as their IPv4 address.
 */
public final class TargetPolicy {
  private final List<Cidr> allow;
  private final List<Cidr> deny;

  private TargetPolicy(List<Cidr> allow, List<Cidr> deny) {
    this.allow = allow;
    this.deny = deny;
  }

  /** From comma-separated range lists (blank = none); a bad range throws {@link IllegalArgumentException} naming it and {@code allowKey}/{@code denyKey}. */
  public static TargetPolicy of(String allow, String deny, String allowKey, String denyKey) {
    return new TargetPolicy(parse(allow, allowKey), parse(deny, denyKey));
  }

  /** From {@code probe.target.allow} and {@code probe.target.deny}; a bad range stops start-up naming the key. */
  public static TargetPolicy from(Config config) {
    try {
      return of(config.get(Keys.PROBE_TARGET_ALLOW), config.get(Keys.PROBE_TARGET_DENY), Keys.PROBE_TARGET_ALLOW.name(), Keys.PROBE_TARGET_DENY.name());
    } catch (IllegalArgumentException e) {
      throw new ConfigException(e.getMessage());
    }
  }

  /** Allows everything: for tests that build devices by hand. */
  public static TargetPolicy open() {
    return new TargetPolicy(List.of(), List.of());
  }

  /** Null when {@code address} may be inspected, else why not (for the check's error and the import's refusal). */
  public String refusal(InetAddress address) {
    byte[] a = normalise(address.getAddress());
    for (Cidr c : deny) if (c.contains(a)) return "target " + address.getHostAddress() + " is in the denied range " + c.text;
    if (allow.isEmpty()) return null;
    for (Cidr c : allow) if (c.contains(a)) return null;
    return "target " + address.getHostAddress() + " is outside the allowed ranges";
  }

  /** The first refusal of the targets a check spec names ({@link CheckSpec#targets}), null when none is refused. */
  public String refusalOfSpec(JsonObject spec) {
    for (String host : CheckSpec.targets(spec)) {
      String r = refusalOfLiteral(host);
      if (r != null) return "check_spec: " + r + " (probe.target.allow / probe.target.deny)";
    }
    return null;
  }

  /** For a target written in a spec: null when it is a host name (judged when resolved) or an allowed address. */
  public String refusalOfLiteral(String host) {
    if (host == null) return null;
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (!looksLikeAddress(h)) return null;
    try {
      return refusal(InetAddress.getByName(h)); // a literal: parsed, never looked up
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static boolean looksLikeAddress(String h) {
    return h.contains(":") || h.matches("[0-9.]+");
  }

  private static List<Cidr> parse(String list, String key) {
    List<Cidr> out = new ArrayList<>();
    if (list == null || list.isBlank()) return out;
    for (String raw : list.split(",")) {
      String r = raw.trim();
      if (r.isEmpty()) continue;
      String addr = r;
      int bits = -1;
      int slash = r.indexOf('/');
      if (slash >= 0) {
        addr = r.substring(0, slash);
        try {
          bits = Integer.parseInt(r.substring(slash + 1));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException(key + ": '" + r + "' is not a CIDR range (address/bits)");
        }
      }
      if (!looksLikeAddress(addr)) throw new IllegalArgumentException(key + ": '" + r + "' is not an IP address or CIDR range");
      byte[] a;
      try {
        a = InetAddress.getByName(addr).getAddress();
      } catch (UnknownHostException e) {
        throw new IllegalArgumentException(key + ": '" + r + "' is not an IP address or CIDR range");
      }
      int max = a.length * 8;
      if (bits < 0) bits = max;
      if (bits > max) throw new IllegalArgumentException(key + ": '" + r + "' has more than " + max + " prefix bits");
      out.add(new Cidr(r, a, bits));
    }
    return List.copyOf(out);
  }

  /** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its four IPv4 bytes. */
  private static byte[] normalise(byte[] a) {
    if (a.length != 16) return a;
    for (int i = 0; i < 10; i++) if (a[i] != 0) return a;
    if (a[10] != (byte) 0xff || a[11] != (byte) 0xff) return a;
    return new byte[] {a[12], a[13], a[14], a[15]};
  }

  private record Cidr(String text, byte[] network, int bits) {
    boolean contains(byte[] a) {
      if (a.length != network.length) return false;
      int full = bits / 8;
      for (int i = 0; i < full; i++) if (a[i] != network[i]) return false;
      int rest = bits % 8;
      if (rest == 0) return true;
      int mask = 0xff << (8 - rest) & 0xff;
      return (a[full] & mask) == (network[full] & mask);
    }
  }
}
