package dev.inspection.scheduler;

import io.vertx.core.Future;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.Collection;
import java.util.TreeSet;

/**
 * The version of each probe group's inspection plan (INV-2): which devices, their intervals and check specs.
 * Every import and PATCH bumps the groups it touches (the group a device left too) in its own transaction;
 * probes read it with their inventory and stamp it on every result as {@code plan_version}. A group never
 * touched is at version 1, the value every envelope carried before plans were versioned.
 */
final class PlanVersions {
  static final String BUMP = """
      INSERT INTO probe_plan (probe_group, plan_version) SELECT g, 2 FROM unnest($1::varchar[]) AS x(g) ORDER BY g
      ON CONFLICT (probe_group) DO UPDATE SET plan_version = probe_plan.plan_version + 1, updated_at = now()""";
  static final String READ = "SELECT coalesce((SELECT plan_version FROM probe_plan WHERE probe_group = $1), 1)";

  private PlanVersions() {}

  /** Bumps {@code groups}, in name order so that two imports lock the rows alike (no deadlock). */
  static Future<Void> bump(SqlClient conn, Collection<String> groups) {
    if (groups.isEmpty()) return Future.succeededFuture();
    return conn.preparedQuery(BUMP).execute(Tuple.tuple().addArrayOfString(new TreeSet<>(groups).toArray(new String[0]))).mapEmpty();
  }

  static Future<Long> read(SqlClient client, String group) {
    return client.preparedQuery(READ).execute(Tuple.of(group)).map(rows -> rows.iterator().next().getLong(0));
  }
}
