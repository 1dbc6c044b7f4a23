//go:build race

package extract

// raceSeeds is how many files TestQuestionsAgreeWithAReference draws
// under the race detector, which slows it tenfold.
const raceSeeds = 30
