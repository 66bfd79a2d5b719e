import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;
import org.brain4it.io.Parser;
import org.brain4it.lang.BList;
import org.brain4it.lang.Context;
import org.brain4it.lang.Function;
import org.brain4it.lib.CoreLibrary;

// ScriptBench runs one of this folder's scripts through brain4it's own
// interpreter, as bpl's BenchmarkScript runs it through kafkabpl's: the
// file evaluates to a function, which is set as the global "bench" and
// called as (bench ARG), WARMUP times unmeasured (the JIT's warm-up),
// then ROUNDS times, timed. It prints the last value, to be checked
// against the Go benchmark's, and the mean time per call.
//
// Usage: java -cp BRAIN4IT_CLASSES:. ScriptBench FILE ARG WARMUP ROUNDS
public class ScriptBench {
  public static void main(String[] args) throws Exception {
    String src = new String(Files.readAllBytes(Paths.get(args[0])), "UTF-8");
    long arg = Long.parseLong(args[1]);
    int warmup = Integer.parseInt(args[2]);
    int rounds = Integer.parseInt(args[3]);
    CoreLibrary core = new CoreLibrary();
    core.load();
    Map<String, Function> functions = core.getFunctions();
    BList global = new BList();
    Context context = new Context(global, functions);
    // Parsed with the library's functions, as brain4it's server parses
    // what it evaluates: builtins are resolved when the code is read.
    global.put("bench", context.evaluate(new Parser(new StringReader(src), functions).parse()));
    Object call = new Parser(new StringReader("(bench " + arg + ")"), functions).parse();
    Object value = null;
    for (int i = 0; i < warmup; i++) {
      value = context.evaluate(call);
    }
    long start = System.nanoTime();
    for (int i = 0; i < rounds; i++) {
      value = context.evaluate(call);
    }
    long perCall = (System.nanoTime() - start) / rounds;
    System.out.println(args[0] + " value=" + value + " ns/op=" + perCall);
    System.exit(0); // the core library's timer thread would keep the JVM up
  }
}
