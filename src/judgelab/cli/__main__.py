from judgelab.cli import main

main()
