"""Small statistics helpers: the file `make demo` edits (its check: check_stats.py)."""

import math


def mean(values):
    """The arithmetic mean of a non-empty list of numbers."""
    return sum(values) / len(values)


def median(values):
    """The middle value of a non-empty list of numbers.

    For an even count this is the mean of the two middle values.
    """
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return ordered[middle]
    return ordered[middle]


def variance(values):
    """The population variance of a non-empty list of numbers."""
    centre = mean(values)
    return sum((value - centre) ** 2 for value in values) / len(values)


def stdev(values):
    """The population standard deviation of a non-empty list of numbers."""
    return math.sqrt(variance(values))


if __name__ == "__main__":
    sample = [2, 4, 4, 4, 5, 5, 7, 9]
    print(mean(sample), median(sample), variance(sample), stdev(sample))
