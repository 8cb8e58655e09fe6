package dev.inspection.admin;

import java.util.Locale;

/**
 * Who a request is, once {@link ApiAuth} or the console login has decided: a name for the audit log and
 * what it may do. {@code group} is the probe group of a probe token ("*" for every group), else null.
 */
record Principal(String name, Access access, String group) {
  /** What a credential allows. */
  enum Access {
    /** api.token or the console user: reads and changes. */
    OPERATOR,
    /** api.read.token or console.readonly.user: reads only; every mutation answers 403. */
    READER,
    /** a token of api.probe.tokens: only /api/v1/probe/* of its group. */
    PROBE
  }

  static final String KEY = "principal";

  boolean mayChange() {
    return access == Access.OPERATOR;
  }

  String role() {
    return access.name().toLowerCase(Locale.ROOT);
  }

  boolean servesGroup(String g) {
    return access == Access.PROBE && ("*".equals(group) || group.equals(g));
  }
}
