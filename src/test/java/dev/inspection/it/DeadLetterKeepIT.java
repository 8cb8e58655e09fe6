package dev.inspection.it;

import static dev.inspection.it.TestEnv.awaitTrue;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import dev.inspection.messaging.Topology;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The dead-letter desk keeps every letter even when keeping one fails for a while: letters whose insert failed are not
 * acked along with the next batch's (a {@code multiple} ack covers every tag below it), they are kept once the insert
 * succeeds. The failure is made exact: the test holds a lock on the table until the desk's insert waits on it, then adds a
 * constraint every row breaks and lets go, so the waiting insert fails; then the constraint goes and one more letter comes.
 */
class DeadLetterKeepIT {
  @Test
  void lettersWhoseInsertFailedAreKeptAndNotAckedAwayByTheNextBatch() throws Exception {
    try (TestEnv env = new TestEnv(1)) {
      env.start(Map.of("role", "all", "node.id", env.name + "-a"));
      Topology t = env.topology();
      try (Channel ch = env.channel()) {
        ch.confirmSelect();
        publish(ch, t, "first");
        awaitTrue(Duration.ofSeconds(30), "the first letter kept", () -> kept(env) == 1);

        try (Connection pg = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "")) {
          pg.setAutoCommit(false);
          try (Statement st = pg.createStatement()) {
            st.execute("LOCK TABLE " + env.name + ".dead_letter IN ACCESS EXCLUSIVE MODE");
            publish(ch, t, "second");
            publish(ch, t, "third");
            awaitTrue(Duration.ofSeconds(30), "the desk's insert waits on the lock", () -> env.queryLong(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace"
                    + " WHERE NOT l.granted AND c.relname = 'dead_letter' AND n.nspname = '" + env.name + "'") > 0);
            st.execute("ALTER TABLE " + env.name + ".dead_letter ADD CONSTRAINT it_refuse CHECK (reason = 'never') NOT VALID");
          }
          pg.commit(); // the waiting insert goes on and fails on the constraint
        }
        awaitTrue(Duration.ofSeconds(30), "the desk's insert done", () -> env.queryLong(
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE NOT l.granted AND c.relname = 'dead_letter' AND n.nspname = '" + env.name + "'") == 0
            && env.queryLong("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'INSERT INTO dead_letter%'") == 0);
        assertEquals(1, kept(env), "the two letters of the failed insert are not kept yet");
        env.execute("ALTER TABLE $S.dead_letter DROP CONSTRAINT it_refuse");

        // one more letter: its batch is acked with multiple=true, which must not take the two unkept ones with it
        publish(ch, t, "fourth");
        awaitTrue(Duration.ofSeconds(30), "all four letters kept", () -> kept(env) == 4);
        awaitTrue(Duration.ofSeconds(30), "nothing left in the dead-letter queue", () -> env.deadLetterCount() == 4);
        assertEquals(4, env.queryLong("SELECT count(DISTINCT body) FROM $S.dead_letter"), "each letter kept once");
      }
    }
  }

  private static void publish(Channel ch, Topology t, String text) throws Exception {
    ch.basicPublish(t.deadLetterExchange(), "", new AMQP.BasicProperties.Builder().deliveryMode(2)
        .headers(Map.of("x-dead-reason", "it_test", "x-dead-detail", text)).build(), text.getBytes(StandardCharsets.UTF_8));
    ch.waitForConfirmsOrDie(10_000);
  }

  private static long kept(TestEnv env) throws Exception {
    return env.queryLong("SELECT count(*) FROM $S.dead_letter");
  }
}
