// Harness runs the scripts of bpl/bench_script_test.go (BenchmarkScript)
// through brain4it's own Java interpreter, after a warm-up for the JIT,
// and prints each timed run's wall time (ns/op) and the process's CPU time
// (cpu-ns/op: user and system, every thread's, as getrusage gives a Go
// test binary's) in Go's benchmark format, so that benchstat reads both.
// It is not part of the Go module; run.sh builds and runs it.
import java.util.HashMap;
import java.util.Map;
import org.brain4it.io.Parser;
import org.brain4it.lang.BList;
import org.brain4it.lang.Context;
import org.brain4it.lang.Function;
import org.brain4it.lib.CoreLibrary;

public class Harness {
  // The same texts as bpl/bench_script_test.go's constants.
  static final String ARITH = "(function (n)\n"
      + "  (local i sum)\n  (set i 0)\n  (set sum 0)\n"
      + "  (while (< i n)\n    (set sum (+ sum (* i 3) (mod i 7)))\n    (set i (+ i 1)))\n  sum)";
  static final String STRINGS = "(function (n)\n"
      + "  (local i total key)\n  (set i 0)\n  (set total 0)\n"
      + "  (while (< i n)\n    (set key (concat \"sensor-\" (string (mod i 1000))))\n"
      + "    (set total (+ total (length key)))\n    (set i (+ i 1)))\n  total)";
  static final String LISTS = "(function (n)\n"
      + "  (local i ring stats)\n  (set ring (list 0 0 0 0 0 0 0 0 0 0))\n"
      + "  (set stats (list \"count\" => 0 \"last\" => null))\n  (set i 0)\n"
      + "  (while (< i n)\n    (put ring (mod i 10) (+ (get ring (mod (+ i 9) 10)) 1))\n"
      + "    (put stats \"count\" (+ (get stats \"count\") 1))\n"
      + "    (put stats \"last\" (get ring (mod i 10)))\n    (set i (+ i 1)))\n  (get stats \"last\"))";
  static final String FIB = "(function (n)\n  (if (< n 2) n (+ (bench (- n 1)) (bench (- n 2)))))";

  public static void main(String[] a) throws Exception {
    int warm = a.length > 0 ? Integer.parseInt(a[0]) : 5; // runs before timing
    int runs = a.length > 1 ? Integer.parseInt(a[1]) : 10; // timed runs, each a line
    CoreLibrary lib = new CoreLibrary();
    lib.load();
    Map<String, Function> fns = new HashMap<>(lib.getFunctions());
    bench("arith", ARITH, 1000000, fns, warm, runs);
    bench("strings", STRINGS, 1000000, fns, warm, runs);
    bench("lists", LISTS, 1000000, fns, warm, runs);
    bench("fib", FIB, 25, fns, warm, runs);
    System.exit(0); // the core library starts a timer thread, which is not a daemon
  }

  static void bench(String name, String src, int arg, Map<String, Function> fns, int warm, int runs) throws Exception {
    BList global = new BList();
    Context ctx = new Context(global, fns);
    global.put("bench", ctx.evaluate(Parser.fromString(src, fns)));
    Object call = Parser.fromString("(bench " + arg + ")", fns);
    Object want = ctx.evaluate(call);
    for (int i = 1; i < warm; i++) {
      ctx.evaluate(call);
    }
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    for (int r = 0; r < runs; r++) {
      long c0 = os.getProcessCpuTime();
      long t0 = System.nanoTime();
      Object v = ctx.evaluate(call);
      long ns = System.nanoTime() - t0;
      long cpu = os.getProcessCpuTime() - c0;
      if (!v.equals(want)) {
        throw new IllegalStateException(name + ": " + v + ", want " + want);
      }
      System.out.println("BenchmarkScript/" + name + "-2 \t       1\t" + ns + " ns/op\t" + cpu + " cpu-ns/op");
    }
    System.err.println(name + " = " + want);
  }
}
