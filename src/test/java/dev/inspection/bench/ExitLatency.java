package dev.inspection.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * How long after a kill -9 PostgreSQL hands a dead JVM's advisory lock on: the time a crashed worker's liveness
 * lock takes to come free (issue 14: kill -9 → first commit elsewhere within 3 s). Linux tears a process down
 * memory first (exit_mm), files and sockets after (exit_files), so the database session, and with it the lock,
 * ends only once the heap is unmapped. A child JVM fills {@code mb} MiB of heap, takes the lock and sleeps; this
 * process waits on the same lock, kills the child with SIGKILL and times the grant. Each JVM option set (one per
 * argument after the first two; "-" for none) is run {@code rounds} times, interleaved, against the local database.
 *
 * <pre>java -cp "target/classes:target/test-classes:$(cat target/bench-classpath.txt)" dev.inspection.bench.ExitLatency 300 5 - -XX:+UseTransparentHugePages</pre>
 */
public final class ExitLatency {
  private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  /** The child: fill the heap, hold the lock, say so, sleep until killed. */
  public static final class Holder {
    public static void main(String[] args) throws Exception {
      int mb = Integer.parseInt(args[0]);
      byte[][] heap = new byte[mb * 8][]; // 128 KiB arrays: not humongous for G1
      for (int i = 0; i < heap.length; i++) {
        heap[i] = new byte[1 << 17];
        for (int j = 0; j < heap[i].length; j += 4096) heap[i][j] = 1; // touch every page
      }
      Connection c = DriverManager.getConnection(URL, "postgres", "");
      c.createStatement().execute("SELECT pg_advisory_lock(4242, " + Integer.parseInt(args[1]) + ")");
      System.out.println("held " + heap.length);
      System.out.flush();
      Thread.sleep(Long.MAX_VALUE); // the behaviour measured: this process holds the lock until it is killed
    }
  }

  public static void main(String[] args) throws Exception {
    int mb = Integer.parseInt(args[0]);
    int rounds = Integer.parseInt(args[1]);
    List<String> variants = List.of(args).subList(2, args.length);
    List<List<Long>> ms = new ArrayList<>();
    for (int v = 0; v < variants.size(); v++) ms.add(new ArrayList<>());
    for (int r = 0; r < rounds; r++) {
      for (int v = 0; v < variants.size(); v++) ms.get(v).add(once(mb, variants.get(v), 1000 + r * 16 + v));
    }
    System.out.printf("kill -9 of a JVM holding %d MiB of touched heap -> its advisory lock granted to a waiting session (ms, %d rounds)%n", mb, rounds);
    for (int v = 0; v < variants.size(); v++) {
      List<Long> s = new ArrayList<>(ms.get(v));
      Collections.sort(s);
      System.out.printf("  %-40s median %5d  min %5d  max %5d   all %s%n", variants.get(v).equals("-") ? "(no option)" : variants.get(v), s.get(s.size() / 2),
          s.get(0), s.get(s.size() - 1), ms.get(v));
    }
    if (variants.size() > 1) {
      double base = median(ms.get(0));
      for (int v = 1; v < variants.size(); v++) System.out.printf("  ratio %s / %s: %.2f%n", variants.get(v), variants.get(0), median(ms.get(v)) / base);
    }
  }

  private static double median(List<Long> xs) {
    List<Long> s = new ArrayList<>(xs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }

  private static long once(int mb, String option, int key) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java", "-Xmx" + (mb + 256) + "m"));
    if (!option.equals("-")) cmd.add(option);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Holder.class.getName(), Integer.toString(mb), Integer.toString(key)));
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
         Connection waiter = DriverManager.getConnection(URL, "postgres", "");
         Connection look = DriverManager.getConnection(URL, "postgres", "")) {
      String line;
      StringBuilder said = new StringBuilder();
      while ((line = out.readLine()) != null && !line.startsWith("held")) said.append(line).append('\n'); // JVM warnings, or why it failed
      if (line == null) throw new IllegalStateException("the child JVM (" + option + ") ended before it held the lock:\n" + said);
      CompletableFuture<Long> granted = CompletableFuture.supplyAsync(() -> {
        try (Statement st = waiter.createStatement()) {
          st.execute("SELECT pg_advisory_lock(4242, " + key + ")");
          long at = System.nanoTime();
          st.execute("SELECT pg_advisory_unlock(4242, " + key + ")");
          return at;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      // the waiter is queued behind the child before the kill
      while (!waiting(look, key)) Thread.onSpinWait();
      long t0 = System.nanoTime();
      child.destroyForcibly();
      return (granted.get(60, TimeUnit.SECONDS) - t0) / 1_000_000;
    } finally {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static boolean waiting(Connection c, int key) throws Exception {
    try (Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 4242 AND objid = " + key + " AND NOT granted")) {
      rs.next();
      return rs.getLong(1) > 0;
    }
  }
}
