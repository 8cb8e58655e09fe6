package dev.inspection.messaging;

import com.rabbitmq.client.Address;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker nodes a connection may use, and the order to try them in (pure: no I/O). A list is
 * {@code host:port,host:port,...} ({@code rabbit.addresses}); an IPv6 literal goes in brackets
 * ({@code [::1]:5672}); an entry without a port takes the default port. A reconnect after a loss starts at
 * the node after the one that was lost and tries that one last, so a dead node costs one refused (or timed
 * out) attempt only when every other node has failed too.
 */
public final class BrokerAddresses {
  private BrokerAddresses() {}

  /**
   * Parses a list; empty (or blank) gives {@code defaultHost:defaultPort} alone. Throws
   * {@link IllegalArgumentException} saying which entry is wrong and why.
   */
  public static List<Address> parse(String value, String defaultHost, int defaultPort) {
    if (value == null || value.isBlank()) return List.of(new Address(defaultHost, defaultPort));
    List<Address> out = new ArrayList<>();
    String[] entries = value.split(",", -1);
    for (int i = 0; i < entries.length; i++) {
      String e = entries[i].trim();
      if (e.isEmpty()) throw new IllegalArgumentException("entry " + (i + 1) + " is empty (a stray comma?)");
      Address a = entry(e, defaultPort);
      if (out.stream().anyMatch(o -> o.getHost().equalsIgnoreCase(a.getHost()) && o.getPort() == a.getPort())) {
        throw new IllegalArgumentException("'" + e + "' is listed twice");
      }
      out.add(a);
    }
    return List.copyOf(out);
  }

  private static Address entry(String e, int defaultPort) {
    String host;
    String port;
    if (e.startsWith("[")) {
      int close = e.indexOf(']');
      if (close < 2) throw new IllegalArgumentException("'" + e + "': an IPv6 address goes in brackets, e.g. [::1]:5672");
      host = e.substring(1, close);
      String rest = e.substring(close + 1);
      if (!rest.isEmpty() && !rest.startsWith(":")) throw new IllegalArgumentException("'" + e + "': expected :port after ']'");
      port = rest.isEmpty() ? null : rest.substring(1);
    } else {
      int colon = e.indexOf(':');
      if (colon != e.lastIndexOf(':')) throw new IllegalArgumentException("'" + e + "': write an IPv6 address in brackets, e.g. [::1]:5672");
      host = colon < 0 ? e : e.substring(0, colon);
      port = colon < 0 ? null : e.substring(colon + 1);
    }
    if (host.isEmpty()) throw new IllegalArgumentException("'" + e + "' has no host");
    if (!host.matches("[A-Za-z0-9._:%-]+")) throw new IllegalArgumentException("'" + e + "': '" + host + "' is not a host name or address");
    if (port == null) return new Address(host, defaultPort);
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException x) {
      throw new IllegalArgumentException("'" + e + "': port '" + port + "' is not a number");
    }
    if (p < 1 || p > 65535) throw new IllegalArgumentException("'" + e + "': port " + p + " is not in 1..65535");
    return new Address(host, p);
  }

  /**
   * The order to try {@code all} in after losing the connection to {@code lost}: the nodes after it in the
   * list first (wrapping round), {@code lost} last. {@code lost} null or not in the list: the list as given.
   */
  public static List<Address> after(List<Address> all, Address lost) {
    int i = lost == null ? -1 : indexOf(all, lost);
    if (i < 0) return all;
    List<Address> out = new ArrayList<>(all.size());
    for (int k = 1; k <= all.size(); k++) out.add(all.get((i + k) % all.size()));
    return List.copyOf(out);
  }

  private static int indexOf(List<Address> all, Address a) {
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).getHost().equalsIgnoreCase(a.getHost()) && all.get(i).getPort() == a.getPort()) return i;
    }
    return -1;
  }

  /** host:port,host:port (IPv6 in brackets), for messages. */
  public static String show(List<Address> all) {
    StringBuilder b = new StringBuilder();
    for (Address a : all) {
      if (b.length() > 0) b.append(',');
      b.append(a.getHost().contains(":") ? "[" + a.getHost() + "]" : a.getHost()).append(':').append(a.getPort());
    }
    return b.toString();
  }
}
