(function (n)
  (if (< n 2) n (+ (bench (- n 1)) (bench (- n 2)))))