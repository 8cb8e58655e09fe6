package dev.inspection.node;

import dev.inspection.config.ConfigException;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.function.Supplier;

/**
 * The base URL this node's HTTP server is reached by, published by a leading scheduler as
 * {@code leader_url} (followers answer 409 with it, the console links to it). {@code http.advertised.url}
 * when set; otherwise the scheme with {@code http.host} and the port, except that a wildcard bind address
 * (0.0.0.0, ::), which no client can use, is replaced by this host's name.
 */
final class AdvertisedUrl {
  private AdvertisedUrl() {}

  /**
   * @param advertised http.advertised.url (blank = derive it)
   * @param scheme "http" or "https"
   * @param bindHost http.host
   * @param port the port the server listens on
   * @param hostName this host's name, asked for only when bindHost is a wildcard
   */
  static String choose(String advertised, String scheme, String bindHost, int port, Supplier<String> hostName) {
    String a = advertised == null ? "" : advertised.trim();
    if (!a.isEmpty()) return a.endsWith("/") ? a.substring(0, a.length() - 1) : a;
    String host = bindHost.trim();
    if (isWildcard(host)) host = hostName.get();
    if (host.contains(":") && !host.startsWith("[")) host = "[" + host + "]"; // an IPv6 literal
    return scheme + "://" + host + ":" + port;
  }

  static boolean isWildcard(String host) {
    String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    return h.isEmpty() || h.equals("0.0.0.0") || h.equals("::") || h.equals("0:0:0:0:0:0:0:0");
  }

  /** Start-up validation of http.advertised.url: blank, or an absolute http(s) URL with a host and no query. */
  static void check(String advertised) {
    String a = advertised == null ? "" : advertised.trim();
    if (a.isEmpty()) return;
    try {
      URI u = new URI(a);
      boolean ok = ("http".equals(u.getScheme()) || "https".equals(u.getScheme())) && u.getHost() != null && u.getQuery() == null
          && u.getFragment() == null && u.getUserInfo() == null;
      if (ok) return;
    } catch (URISyntaxException e) {
      // reported below
    }
    throw new ConfigException("http.advertised.url '" + a + "' is not a base URL like https://scheduler-1.example.net:8080"
        + " (http or https, a host, no user, query or fragment)");
  }

  /**
   * This host's name as the system knows it, or else its first IPv4 address on an interface that is up and
   * not loopback; "localhost" when there is neither. Blocking (a resolver call): call it at start, off the event loop.
   */
  static String localHostName() {
    try {
      String name = InetAddress.getLocalHost().getHostName();
      if (name != null && !name.isBlank()) return name;
    } catch (IOException e) {
      // the host name does not resolve: try the interfaces
    }
    try {
      for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!n.isUp() || n.isLoopback()) continue;
        for (InetAddress a : Collections.list(n.getInetAddresses())) {
          if (a instanceof Inet4Address) return a.getHostAddress();
        }
      }
    } catch (IOException e) {
      // no interface list either
    }
    return "localhost";
  }
}
