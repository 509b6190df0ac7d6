package bench
