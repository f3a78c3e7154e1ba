def fizzbuzz(n):
    """Print the numbers 1..n, with Fizz for multiples of 3 and Buzz for multiples of 5."""
    for i in range(1, n + 1):
        if i % 15 == 0:
            print("FizzBuzz")
        elif i % 3 == 0:
            print("Fizz")
        elif i % 5 == 0:
            print("Buzz")
        else:
            print(i)


if __name__ == "__main__":
    fizzbuzz(20)
